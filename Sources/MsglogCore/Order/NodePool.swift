/// Nodes in an array: the in-memory store of a counted tree.
public struct NodePool<Element: Sendable>: TreeNodeStore {
  var nodes: [TreeNode<Element>] = [TreeNode(parent: 0, isLeaf: true)]  // slot 0 is "none"
  var freed: [NodeID] = []

  public init() {}

  @inline(__always)
  public func read<R>(_ id: NodeID, _ body: (TreeNode<Element>) throws -> R) rethrows -> R {
    try body(nodes[Int(id)])
  }

  @inline(__always)
  public mutating func update<R>(_ id: NodeID, _ body: (inout TreeNode<Element>) throws -> R) rethrows -> R {
    try body(&nodes[Int(id)])
  }

  public mutating func allocate(_ node: TreeNode<Element>) -> NodeID {
    if let id = freed.popLast() {
      nodes[Int(id)] = node
      return id
    }
    nodes.append(node)
    return NodeID(nodes.count - 1)
  }

  public mutating func free(_ id: NodeID) {
    nodes[Int(id)] = TreeNode(parent: 0, isLeaf: true)
    freed.append(id)
  }
}
