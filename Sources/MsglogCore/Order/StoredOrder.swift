/// Node sizes of stored order trees: 64 slots (1.5 KiB) per leaf and 64
/// children per inner node keep every node within one LMDB page, so a
/// write copies a few pages whatever the stream's size.
package enum StoredOrder {
  package static let leafCapacity = 64
  package static let fanout = 64

  /// A stream's order as a counted tree.
  package typealias Tree = CountedTree<StoredNodes>

  package static func tree(_ nodes: StoredNodes, head: StreamHead) -> Tree {
    CountedTree(store: nodes, root: head.root, count: Int(head.count), leafCapacity: leafCapacity, fanout: fanout)
  }

  /// Calls `body` with the stream's slots in order, one leaf in memory at a time.
  package static func forEachSlot(of head: StreamHead, in reader: any LogReader, _ body: (Slot) throws -> Bool) throws {
    try tree(StoredNodes(reader: reader, stream: head.stream), head: head).forEach(body)
  }

  /// The words for a leaf the tree names but the store lacks.
  package static func missingLeaf(_ id: NodeID, of stream: StreamName) -> DerivedDamage {
    DerivedDamage(.order, "the order of stream \(TerminalText.quoted(stream)) lacks leaf \(id)")
  }

  /// How many leaves one batch holds: up to 16,384 slots in memory at a time.
  static let leavesPerBatch = 256

  /// Calls `body` with the stream's slots in order, a batch of leaves at a
  /// time: the tree is read level by level, each level's nodes in a few
  /// batched requests, so that a store across a network answers a stream of
  /// a million items in hundreds of round trips, not a million. Memory stays
  /// bounded by the batch and the inner levels (the leaf ids: 8 bytes per 48 items).
  package static func forEachLeafBatch(
    of head: StreamHead, in reader: any LogReader, _ body: ([Slot]) throws -> Void
  ) throws {
    guard head.root != 0 else { return }
    let stream = head.stream
    var level: [NodeID] = [head.root]
    for _ in 0..<Tree.maxDepth {
      // Is this the leaf level? Ask for its first node.
      guard let first = try reader.orderNodes([level[0]], of: stream)[level[0]] else {
        throw DerivedDamage(.order, "the order of stream \(TerminalText.quoted(stream)) lacks node \(level[0])")
      }
      if first.isLeaf {
        var slots: [Slot] = []
        for start in stride(from: 0, to: level.count, by: leavesPerBatch) {
          slots.removeAll(keepingCapacity: true)
          try reader.appendLeafSlots(Array(level[start..<min(start + leavesPerBatch, level.count)]), of: stream, to: &slots)
          try body(slots)
        }
        return
      }
      var next: [NodeID] = []
      for start in stride(from: 0, to: level.count, by: leavesPerBatch) {
        let ids = Array(level[start..<min(start + leavesPerBatch, level.count)])
        let nodes = try reader.orderNodes(ids, of: stream)
        for id in ids {
          guard let node = nodes[id], !node.isLeaf, node.children.count == node.counts.count else {
            throw DerivedDamage(.order, "the order of stream \(TerminalText.quoted(stream)) has a bad inner node \(id)")
          }
          next.append(contentsOf: node.children)
        }
      }
      guard !next.isEmpty else { return }
      level = next
    }
    throw DerivedDamage(.order, "the order of stream \(TerminalText.quoted(stream)) is deeper than \(Tree.maxDepth) levels")
  }
}
