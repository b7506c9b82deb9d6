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
/// insert: the leaf holding it, the seq of its remove (0 while live) and its
/// stream. Arrays indexed by seq rather than hash tables keyed by id: the
/// order tree's slots carry the insert seq, so a split or a merge notes
/// where its items went without hashing anything.
final class ItemTable {
  let firstSeq: UInt64
  private let capacity: Int
  private let leaves: UnsafeMutablePointer<NodeID>
  private let removes: UnsafeMutablePointer<UInt64>
  private let streams: UnsafeMutablePointer<Int32>

  /// Room for the items of `capacity` events from `firstSeq` on.
  init(firstSeq: UInt64, capacity: Int) {
    self.firstSeq = firstSeq
    self.capacity = max(capacity, 1)
    leaves = .allocate(capacity: self.capacity)
    leaves.initialize(repeating: 0, count: self.capacity)
    removes = .allocate(capacity: self.capacity)
    removes.initialize(repeating: 0, count: self.capacity)
    streams = .allocate(capacity: self.capacity)
    streams.initialize(repeating: -1, count: self.capacity)
  }

  deinit {
    leaves.deallocate()
    removes.deallocate()
    streams.deallocate()
  }

  /// The position of `seq` in the arrays; every seq asked about is one of
  /// the import's own inserts.
  @inline(__always)
  private func slot(_ seq: UInt64) -> Int {
    let i = Int(seq &- firstSeq)
    precondition(seq >= firstSeq && i < capacity, "seq \(seq) is not one of the bulk import's")
    return i
  }

  func leaf(of seq: UInt64) -> NodeID { leaves[slot(seq)] }
  func setLeaf(_ leaf: NodeID, of seq: UInt64) { leaves[slot(seq)] = leaf }
  func removeSeq(of seq: UInt64) -> UInt64 { removes[slot(seq)] }
  func setRemoved(_ seq: UInt64, by remove: UInt64) { removes[slot(seq)] = remove }
  func stream(of seq: UInt64) -> Int { Int(streams[slot(seq)]) }
  func setStream(_ stream: Int, of seq: UInt64) { streams[slot(seq)] = Int32(stream) }
}
