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
  func insertsInIDOrder() -> [UInt64] {
    var positions: [UInt32] = []
    for i in 0..<capacity where streams[i] >= 0 { positions.append(UInt32(i)) }
    positions.sort { idWords[Int($0)] < idWords[Int($1)] }
    return positions.map { firstSeq + UInt64($0) }
  }

  /// The id the insert at `seq` inserted.
  func id(insertedAt seq: UInt64) -> ItemID { idWords[slot(seq)].id }
}
