/// Where a counted tree keeps its nodes: an array in memory (`NodePool`), or
/// rows of a database read and written through a transaction.
package protocol TreeNodeStore {
  associatedtype Element: Sendable
  func read<R>(_ id: NodeID, _ body: (TreeNode<Element>) throws -> R) throws -> R
  mutating func update<R>(_ id: NodeID, _ body: (inout TreeNode<Element>) throws -> R) throws -> R
  mutating func allocate(_ node: TreeNode<Element>) throws -> NodeID
  mutating func free(_ id: NodeID) throws
  /// Told whenever elements come to live in `leaf` (insert, split, merge),
  /// when `tracksPlacements` is true: for stores that index where each element is.
  mutating func placed(_ elements: ArraySlice<Element>, in leaf: NodeID) throws
  var tracksPlacements: Bool { get }
}

extension TreeNodeStore {
  package mutating func placed(_ elements: ArraySlice<Element>, in leaf: NodeID) throws {}
  package var tracksPlacements: Bool { false }
}
