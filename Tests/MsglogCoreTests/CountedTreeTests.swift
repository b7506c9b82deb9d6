import Foundation
import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

/// A pool that also indexes which leaf each element lives in, as the
/// database store does, so that positions of ids can be checked.
struct TrackingPool: TreeNodeStore {
  var pool = NodePool<Slot>()
  var leafOf: [ItemID: NodeID] = [:]

  func read<R>(_ id: NodeID, _ body: (TreeNode<Slot>) throws -> R) throws -> R { try pool.read(id, body) }
  mutating func update<R>(_ id: NodeID, _ body: (inout TreeNode<Slot>) throws -> R) throws -> R {
    try pool.update(id, body)
  }
  mutating func allocate(_ node: TreeNode<Slot>) throws -> NodeID { pool.allocate(node) }
  mutating func free(_ id: NodeID) throws { pool.free(id) }
  var tracksPlacements: Bool { true }
  mutating func placed(_ elements: ArraySlice<Slot>, in leaf: NodeID) throws {
    for e in elements { leafOf[e.id] = leaf }
  }
}

/// The counted tree against a plain Array: random inserts, removes and moves,
/// with tiny nodes (many splits and merges) and realistic ones, small and large.
@Suite struct CountedTreeTests {
  @Test(arguments: [(4, 4, 3000), (5, 6, 3000), (128, 64, 20000), (16, 8, 60000)])
  func agreesWithArray(leaf: Int, fanout: Int, steps: Int) throws {
    var rng = SeededGenerator(seed: UInt64(leaf * 1000 + fanout))
    var tree = CountedTree(store: TrackingPool(), leafCapacity: leaf, fanout: fanout)
    var model: [Slot] = []
    for step in 0..<steps {
      // Grow for the first half, then shrink, so that merges happen at every level.
      let growing = step < steps / 2
      let roll = Int.random(in: 0..<10, using: &rng)
      if model.isEmpty || (growing ? roll < 6 : roll < 3) {
        let slot = Slot(id: ItemID(), seq: UInt64(step))
        let index = Int.random(in: 0...model.count, using: &rng)
        try tree.insert(slot, at: index)
        model.insert(slot, at: index)
      } else if roll < 8 {
        let index = Int.random(in: 0..<model.count, using: &rng)
        let removed = try tree.remove(at: index)
        #expect(removed == model.remove(at: index))
      } else {
        let from = Int.random(in: 0..<model.count, using: &rng)
        let to = Int.random(in: 0..<model.count, using: &rng)
        try tree.move(from: from, to: to)
        model.insert(model.remove(at: from), at: to)
      }
      #expect(tree.count == model.count)
      if step % 97 == 0 || model.count < 10 {
        #expect(try tree.elements() == model, "step \(step)")
        try checkInvariants(tree)
      }
      if !model.isEmpty {
        let probe = Int.random(in: 0..<model.count, using: &rng)
        #expect(try tree.element(at: probe) == model[probe])
        let id = model[probe].id
        let leafID = try #require(tree.store.leafOf[id])
        #expect(try tree.index(inLeaf: leafID, where: { $0.id == id }) == probe, "step \(step)")
      }
    }
    #expect(try tree.elements() == model)
  }

  /// Counts match subtrees, parents point back, and no node but the root is empty.
  func checkInvariants(_ tree: CountedTree<TrackingPool>) throws {
    guard tree.root != 0 else {
      #expect(tree.count == 0)
      return
    }
    func walk(_ id: NodeID, parent: NodeID) throws -> Int {
      let node = try tree.store.read(id) { $0 }
      #expect(node.parent == parent)
      if node.isLeaf {
        #expect(node.elements.count <= tree.leafCapacity)
        #expect(!node.elements.isEmpty || parent == 0)
        return node.elements.count
      }
      #expect(node.children.count <= tree.fanout && !node.children.isEmpty)
      var total = 0
      for (c, child) in node.children.enumerated() {
        let n = try walk(child, parent: id)
        #expect(node.counts[c] == n)
        total += n
      }
      return total
    }
    #expect(try walk(tree.root, parent: 0) == tree.count)
  }

  @Test(arguments: [0, 1, 5, 96, 97, 1000, 100_000])
  func bulkBuildEqualsItsSource(size: Int) throws {
    let source = (0..<size).map { Slot(id: ItemID(), seq: UInt64($0)) }
    var list = OrderedList(source)
    #expect(list.count == size)
    #expect(list.elements == source)
    if size > 0 {
      #expect(list[size / 2] == source[size / 2])
      list.insert(Slot(id: ItemID(), seq: 0), at: size / 2)
      list.remove(at: 0)
      #expect(list.count == size)
    }
  }
}
