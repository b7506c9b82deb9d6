/// The nodes of a new stream's order tree while a bulk import builds it:
/// in an array indexed by node id, numbered from 1 and never reused, as
/// `StoredNodes` numbers the nodes of a stream without any, so that the
/// same operations make the same nodes. Where each item lives is noted in
/// the import's `ItemTable` (what `StoredNodes.placements` is to a session).
struct BuiltNodes: TreeNodeStore {
  typealias Element = Slot
  /// Index = node id; nil for 0 ("none") and for freed nodes.
  private(set) var nodes: [TreeNode<Slot>?] = [nil]
  private(set) var liveNodes = 0
  let items: ItemTable

  init(items: ItemTable) {
    self.items = items
  }

  /// The id the next node gets (the head's `nextNode`).
  var nextNode: NodeID { NodeID(nodes.count) }

  func read<R>(_ id: NodeID, _ body: (TreeNode<Slot>) throws -> R) throws -> R {
    guard id != 0, id < nodes.count, let node = nodes[Int(id)] else {
      throw DerivedDamage(.order, "a bulk import's order tree lacks node \(id)")
    }
    return try body(node)
  }

  mutating func update<R>(_ id: NodeID, _ body: (inout TreeNode<Slot>) throws -> R) throws -> R {
    guard id != 0, id < nodes.count, nodes[Int(id)] != nil else {
      throw DerivedDamage(.order, "a bulk import's order tree lacks node \(id)")
    }
    return try body(&nodes[Int(id)]!)
  }

  mutating func allocate(_ node: TreeNode<Slot>) throws -> NodeID {
    nodes.append(node)
    liveNodes += 1
    return NodeID(nodes.count - 1)
  }

  mutating func free(_ id: NodeID) throws {
    nodes[Int(id)] = nil
    liveNodes -= 1
  }

  var tracksPlacements: Bool { true }

  mutating func placed(_ elements: ArraySlice<Slot>, in leaf: NodeID) throws {
    for slot in elements { items.setLeaf(leaf, of: slot.seq) }
  }
}

/// What a bulk import knows of each item it inserts, by the seq of its
/// insert: its id, the leaf holding it, the seq of its remove (0 while
/// live) and its stream; and the ids it inserted, to look up. Arrays
/// indexed by seq rather than hash tables keyed by id: the order tree's
/// slots carry the insert seq, so a split or a merge notes where its items
/// went without hashing anything. The ids' own table is open addressing
/// over positions in those arrays (4 bytes a bucket), not a `Dictionary`
/// of ids and seqs: a million inserts' index takes 8 MB rather than 50.
final class ItemTable {
  let firstSeq: UInt64
  /// How many events from `firstSeq` on the table has room for.
  let capacity: Int
  /// Node ids and the removes' positions + 1 (0: live) in 4 bytes each:
  /// an import has fewer than 2^31 events, and a stream fewer nodes.
  private let leaves: UnsafeMutablePointer<UInt32>
  private let removes: UnsafeMutablePointer<UInt32>
  private let streams: UnsafeMutablePointer<Int32>
  /// Each insert's id as two big-endian words, which compare as its bytes do.
  private let idWords: UnsafeMutablePointer<IDWords>
  /// Buckets of the id index: an insert's position + 1, 0 when empty; at
  /// most half of them full.
  private let buckets: UnsafeMutablePointer<UInt32>
  private let bucketMask: Int

  struct IDWords: Equatable {
    var high: UInt64
    var low: UInt64

    init(_ id: ItemID) {
      (high, low) = id.withUnsafeBytes {
        ($0.loadBigEndian(fromByteOffset: 0, as: UInt64.self), $0.loadBigEndian(fromByteOffset: 8, as: UInt64.self))
      }
    }

    var id: ItemID {
      let words: InlineArray<2, UInt64> = [high.bigEndian, low.bigEndian]
      return withUnsafeBytes(of: words) { ItemID(bytes: $0) }
    }

    static func < (a: IDWords, b: IDWords) -> Bool { (a.high, a.low) < (b.high, b.low) }
  }

  /// The most events a table takes: positions fit in 4 bytes, with room
  /// for the index's twice as many buckets.
  static let maximumCapacity = Int(UInt32.max) / 2 - 1

  /// Room for the items of `capacity` events from `firstSeq` on.
  init(firstSeq: UInt64, capacity: Int) {
    precondition(capacity <= Self.maximumCapacity, "a bulk import of \(capacity) events")
    self.firstSeq = firstSeq
    self.capacity = max(capacity, 1)
    leaves = .allocate(capacity: self.capacity)
    leaves.initialize(repeating: 0, count: self.capacity)
    removes = .allocate(capacity: self.capacity)
    removes.initialize(repeating: 0, count: self.capacity)
    streams = .allocate(capacity: self.capacity)
    streams.initialize(repeating: -1, count: self.capacity)
    idWords = .allocate(capacity: self.capacity)
    var bucketCount = 16
    while bucketCount < 2 * self.capacity { bucketCount *= 2 }
    buckets = .allocate(capacity: bucketCount)
    buckets.initialize(repeating: 0, count: bucketCount)
    bucketMask = bucketCount - 1
  }

  deinit {
    leaves.deallocate()
    removes.deallocate()
    streams.deallocate()
    idWords.deallocate()
    buckets.deallocate()
  }

  /// The position of `seq` in the arrays; every seq asked about is one of
  /// the import's own inserts.
  @inline(__always)
  private func slot(_ seq: UInt64) -> Int {
    let i = Int(seq &- firstSeq)
    precondition(seq >= firstSeq && i < capacity, "seq \(seq) is not one of the bulk import's")
    return i
  }

  func leaf(of seq: UInt64) -> NodeID { NodeID(leaves[slot(seq)]) }
  func setLeaf(_ leaf: NodeID, of seq: UInt64) { leaves[slot(seq)] = UInt32(leaf) }

  func removeSeq(of seq: UInt64) -> UInt64 {
    let stored = removes[slot(seq)]
    return stored == 0 ? 0 : firstSeq + UInt64(stored - 1)
  }

  func setRemoved(_ seq: UInt64, by remove: UInt64) { removes[slot(seq)] = UInt32(slot(remove) + 1) }
  func stream(of seq: UInt64) -> Int { Int(streams[slot(seq)]) }

  /// Notes the insert at `seq` of `id` into stream `stream`.
  func setInserted(_ id: ItemID, into stream: Int, at seq: UInt64) {
    let i = slot(seq)
    streams[i] = Int32(stream)
    idWords[i] = IDWords(id)
    var bucket = id.hashValue & bucketMask
    while buckets[bucket] != 0 { bucket = (bucket + 1) & bucketMask }
    buckets[bucket] = UInt32(i + 1)
  }

  /// The seq of the import's insert of `id`; nil when it inserted none.
  func insertSeq(of id: ItemID) -> UInt64? {
    let words = IDWords(id)
    var bucket = id.hashValue & bucketMask
    while case let stored = buckets[bucket], stored != 0 {
      if idWords[Int(stored) - 1] == words { return firstSeq + UInt64(stored - 1) }
      bucket = (bucket + 1) & bucketMask
    }
    return nil
  }

  /// The seqs of every insert of the import, in id order (bytewise).
  ///
  /// A radix sort of the ids' first eight bytes, a byte a pass (random ids:
  /// nothing for a comparison sort to find), then the rare runs that share
  /// them put in order by the rest. The standard library's sort, comparing
  /// ids through their positions, was 6 % of a short import's building
  /// thread: about 520 instructions an insert.
  func insertsInIDOrder() -> [UInt64] {
    var keys: [(high: UInt64, position: UInt32)] = []
    for i in 0..<capacity where streams[i] >= 0 { keys.append((idWords[i].high, UInt32(i))) }
    Self.radixSort(&keys)
    // Ids that share their first eight bytes: in order by the last eight.
    var start = 0
    while start < keys.count {
      var end = start + 1
      while end < keys.count, keys[end].high == keys[start].high { end += 1 }
      if end - start > 1 { keys[start..<end].sort { idWords[Int($0.position)].low < idWords[Int($1.position)].low } }
      start = end
    }
    return keys.map { firstSeq + UInt64($0.position) }
  }

  /// Sorts `keys` by `high`, a byte a pass from the lowest (a pass whose
  /// byte is the same in every key is skipped).
  static func radixSort(_ keys: inout [(high: UInt64, position: UInt32)]) {
    let n = keys.count
    guard n > 1 else { return }
    // Every pass's counts in one read of the keys.
    var counts = [Int](repeating: 0, count: 8 * 256)
    for key in keys {
      for pass in 0..<8 { counts[pass &* 256 &+ Int(truncatingIfNeeded: key.high >> (8 &* UInt64(pass))) & 0xFF] &+= 1 }
    }
    var other = keys
    for pass in 0..<8 {
      let base = pass * 256
      let shift = UInt64(8 * pass)
      guard counts[base + Int(truncatingIfNeeded: keys[0].high >> shift) & 0xFF] != n else { continue }
      var next = 0
      for b in 0..<256 {
        let count = counts[base + b]
        counts[base + b] = next
        next += count
      }
      keys.withUnsafeBufferPointer { from in
        other.withUnsafeMutableBufferPointer { to in
          for key in from {
            let b = base + Int(truncatingIfNeeded: key.high >> shift) & 0xFF
            to[counts[b]] = key
            counts[b] &+= 1
          }
        }
      }
      swap(&keys, &other)
    }
  }

  /// The id the insert at `seq` inserted.
  func id(insertedAt seq: UInt64) -> ItemID { idWords[slot(seq)].id }
}
