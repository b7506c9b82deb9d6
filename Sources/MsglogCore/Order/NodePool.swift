/// Nodes in an array: the in-memory store of a counted tree.
package struct NodePool<Element: Sendable>: TreeNodeStore {
  var nodes: [TreeNode<Element>] = [TreeNode(parent: 0, isLeaf: true)]  // slot 0 is "none"
  var freed: [NodeID] = []

  package init() {}

  @inline(__always)
  package func read<R>(_ id: NodeID, _ body: (TreeNode<Element>) throws -> R) rethrows -> R {
    try body(nodes[Int(id)])
  }

  @inline(__always)
  package mutating func update<R>(_ id: NodeID, _ body: (inout TreeNode<Element>) throws -> R) rethrows -> R {
    try body(&nodes[Int(id)])
  }

  package mutating func allocate(_ node: TreeNode<Element>) -> NodeID {
    if let id = freed.popLast() {
      nodes[Int(id)] = node
      return id
    }
    nodes.append(node)
    return NodeID(nodes.count - 1)
  }

  package mutating func free(_ id: NodeID) {
    nodes[Int(id)] = TreeNode(parent: 0, isLeaf: true)
    freed.append(id)
  }
}
