extension StoredOrder {
  /// What `verify` learns from walking a stored order tree without trusting it.
  package struct Inspection {
    package var slots: [Slot] = []
    package var leafOf: [ItemID: NodeID] = [:]
    package var nodes = 0
    package var problems: [String] = []
  }

  /// Walks the stream's tree from its root, checking every link: each
  /// child's parent, each count against what lies below, node ids below
  /// the head's next id, no node reached twice, the total against the head.
  package static func inspect(_ head: StreamHead, in reader: any LogReader) -> Inspection {
    var result = Inspection()
    guard head.root != 0 else {
      if head.count != 0 { result.problems.append("the head counts \(head.count) items but has no tree") }
      return result
    }
    let (nodes, unreadable) = readTree(head, in: reader)
    var seen: Set<NodeID> = []
    /// The number of items under `id`, or nil when the walk must stop.
    func walk(_ id: NodeID, parent: NodeID, depth: Int) -> Int? {
      guard depth < Tree.maxDepth else {
        result.problems.append("the tree is deeper than \(Tree.maxDepth) levels at node \(id)")
        return nil
      }
      guard id != 0, id < head.nextNode else {
        result.problems.append("node \(id) is not below the head's next node id \(head.nextNode)")
        return nil
      }
      guard seen.insert(id).inserted else {
        result.problems.append("node \(id) is reached twice")
        return nil
      }
      if let reason = unreadable[id] {
        result.problems.append(reason)
        return nil
      }
      guard let node = nodes[id] else {
        result.problems.append("node \(id) is missing")
        return nil
      }
      result.nodes += 1
      if node.parent != parent {
        result.problems.append("node \(id) names \(node.parent) as its parent, not \(parent)")
      }
      if node.isLeaf {
        for slot in node.elements { result.leafOf[slot.id] = id }
        result.slots.append(contentsOf: node.elements)
        return node.elements.count
      }
      guard !node.children.isEmpty, node.children.count == node.counts.count else {
        result.problems.append("inner node \(id) has \(node.children.count) children and \(node.counts.count) counts")
        return nil
      }
      var total = 0
      for (child, count) in zip(node.children, node.counts) {
        guard let found = walk(child, parent: id, depth: depth + 1) else { return nil }
        if found != count {
          result.problems.append("node \(id) counts \(count) items under node \(child), which holds \(found)")
        }
        total += found
      }
      return total
    }
    if let total = walk(head.root, parent: 0, depth: 0), UInt64(total) != head.count {
      result.problems.append("the tree holds \(total) items; the head counts \(head.count)")
    }
    return result
  }

  /// The nodes reachable from the stream's root, read a level at a time —
  /// one request per level (in chunks) where the store is a server, rather
  /// than one per node — and why each node that could not be read could
  /// not (a damaged row is read on its own, so that it is named).
  static func readTree(_ head: StreamHead, in reader: any LogReader) -> (
    nodes: [NodeID: TreeNode<Slot>], unreadable: [NodeID: String]
  ) {
    var nodes: [NodeID: TreeNode<Slot>] = [:]
    var unreadable: [NodeID: String] = [:]
    var asked: Set<NodeID> = []
    var level = [head.root]
    for _ in 0..<Tree.maxDepth where !level.isEmpty {
      let wanted = level.filter { $0 != 0 && $0 < head.nextNode && asked.insert($0).inserted }
      var found: [NodeID: TreeNode<Slot>] = [:]
      for start in stride(from: 0, to: wanted.count, by: 1024) {
        let chunk = Array(wanted[start..<min(start + 1024, wanted.count)])
        if let batch = try? reader.orderNodes(chunk, of: head.stream) {
          found.merge(batch) { $1 }
          continue
        }
        for id in chunk {
          do {
            found[id] = try reader.orderNode(id, of: head.stream)
          } catch {
            unreadable[id] = "\(error)"
          }
        }
      }
      nodes.merge(found) { $1 }
      level = wanted.flatMap { found[$0].map { $0.isLeaf ? [] : $0.children } ?? [] }
    }
    return (nodes, unreadable)
  }
}
