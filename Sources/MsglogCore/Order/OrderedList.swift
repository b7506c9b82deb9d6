/// An in-memory sequence with O(log n) positional insert, remove, move and
/// access: the projection replay and bulk validation fold events into.
package struct OrderedList<Element: Sendable> {
  var tree: CountedTree<NodePool<Element>>

  /// Leaves of 128 elements and inner nodes of 16 children: the fewest
  /// instructions (callgrind) for a replay of automerge-paper among 64–512
  /// and 8–64; wide inner nodes cost a long scan of child counts per level.
  package init(leafCapacity: Int = 128, fanout: Int = 16) {
    tree = CountedTree(store: NodePool(), leafCapacity: leafCapacity, fanout: fanout)
  }

  package init<S: Sequence>(_ elements: S, leafCapacity: Int = 128, fanout: Int = 16) where S.Element == Element {
    self.init(leafCapacity: leafCapacity, fanout: fanout)
    try! tree.build(elements)
  }

  package var count: Int { tree.count }
  package var isEmpty: Bool { tree.count == 0 }

  package subscript(index: Int) -> Element { try! tree.element(at: index) }

  package mutating func insert(_ element: Element, at index: Int) { try! tree.insert(element, at: index) }

  @discardableResult
  package mutating func remove(at index: Int) -> Element { try! tree.remove(at: index) }

  package mutating func move(from: Int, to: Int) { try! tree.move(from: from, to: to) }

  /// Replaces the element at `index`, returning the one it held.
  @discardableResult
  package mutating func replace(at index: Int, with element: Element) -> Element {
    try! tree.replace(at: index, with: element)
  }

  package mutating func append(_ element: Element) { insert(element, at: count) }

  /// Calls `body` with each element in order until it returns false.
  package func forEach(_ body: (Element) -> Bool) {
    try! tree.forEach(body)
  }

  package var elements: [Element] { try! tree.elements() }
}
