/// A node's number in its store; 0 is "none".
package typealias NodeID = UInt64

/// One node of a counted B+tree: a leaf holds elements, an inner node holds
/// children with the number of elements under each.
package struct TreeNode<Element>: Sendable where Element: Sendable {
  package var parent: NodeID
  package var isLeaf: Bool
  /// Leaf: the elements, in order.
  package var elements: [Element]
  /// Inner: child node ids, in order, and the element count under each.
  package var children: [NodeID]
  package var counts: [Int]

  package init(parent: NodeID, isLeaf: Bool, elements: [Element] = [], children: [NodeID] = [], counts: [Int] = []) {
    self.parent = parent
    self.isLeaf = isLeaf
    self.elements = elements
    self.children = children
    self.counts = counts
  }

  /// Entries in this node: elements of a leaf, children of an inner node.
  package var width: Int { isLeaf ? elements.count : children.count }
}
