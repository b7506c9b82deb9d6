/// An order-statistic B+tree: a sequence with O(log n) insert, remove and
/// access by position, and O(log n) position of an element whose leaf is known.
///
/// The same algorithm serves the in-memory projection used by replay and
/// import (`OrderedList`) and the per-stream order kept in the database,
/// which a write updates in place, touching one node per level.
/// Leaves hold up to `leafCapacity` elements and inner nodes up to `fanout`
/// children; a node that falls below a quarter full is merged with a sibling.
///
/// A stored tree is read from bytes that may have been damaged behind
/// msglog's back (each node passes its checksum, but nodes may contradict
/// each other): every access checks what it relies on and throws
/// `DerivedDamage` instead of trapping, and walks are bounded in depth so
/// that a cycle of links cannot recurse forever.
package struct CountedTree<Store: TreeNodeStore> {
  package typealias Element = Store.Element
  package var store: Store
  package private(set) var root: NodeID
  package private(set) var count: Int
  package let leafCapacity: Int
  package let fanout: Int
  /// No tree of 2^63 elements with inner nodes of 4 or more children is
  /// deeper: a walk of a stored tree, whose links may have been damaged,
  /// stops here rather than follow a cycle.
  package static var maxDepth: Int { 48 }

  package init(store: Store, root: NodeID = 0, count: Int = 0, leafCapacity: Int, fanout: Int) {
    precondition(leafCapacity >= 4 && fanout >= 4, "capacities below 4 cannot split and merge")
    self.store = store
    self.root = root
    self.count = count
    self.leafCapacity = leafCapacity
    self.fanout = fanout
  }

  // MARK: - Access

  /// The element at `index`.
  package func element(at index: Int) throws -> Element {
    guard index >= 0 && index < count else { throw Self.damage("position \(index) is outside its \(count) items") }
    let (leaf, offset) = try locate(index)
    return try store.read(leaf) { node in
      guard offset < node.elements.count else { throw Self.damage("leaf \(leaf) is shorter than its parent counts") }
      return node.elements[offset]
    }
  }

  static func damage(_ reason: String) -> DerivedDamage { DerivedDamage(.order, reason) }

  /// Checks that an inner node's arrays agree, before indexing into them.
  static func checkInner(_ node: TreeNode<Element>, _ id: NodeID) throws(DerivedDamage) {
    guard !node.children.isEmpty, node.children.count == node.counts.count else {
      throw DerivedDamage(
        .order, "inner node \(id) has \(node.children.count) children and \(node.counts.count) counts")
    }
  }

  /// The leaf holding position `index` and the offset within it.
  func locate(_ index: Int) throws -> (NodeID, Int) {
    var id = root
    var i = index
    for _ in 0..<Self.maxDepth {
      let next: NodeID? = try store.read(id) { node in
        if node.isLeaf { return nil }
        try Self.checkInner(node, id)
        return node.children[Self.child(containing: &i, in: node, endGoesLeft: false)]
      }
      guard let next else { return (id, i) }
      id = next
    }
    throw Self.damage("the tree is deeper than \(Self.maxDepth) levels (a cycle?)")
  }

  /// The child of an inner node that holds position `i`, and `i` made
  /// relative to it. With `endGoesLeft`, a position just past a child's end
  /// stays in that child (an insert there appends to it, not to the next).
  ///
  /// The counts are read through a buffer, each kind of walk in its own
  /// loop: a bounds check and the choice between them for every child
  /// were most of an import's descents (`checkInner` has made sure that
  /// there are as many counts as children).
  @inline(__always)
  static func child(containing i: inout Int, in node: TreeNode<Element>, endGoesLeft: Bool) -> Int {
    let last = node.children.count - 1
    return node.counts.withUnsafeBufferPointer { counts in
      precondition(last < counts.count, "an inner node has a count for each child")
      var c = 0
      if endGoesLeft {
        while c < last && i > counts[c] {
          i -= counts[c]
          c += 1
        }
      } else {
        while c < last && i >= counts[c] {
          i -= counts[c]
          c += 1
        }
      }
      return c
    }
  }

  /// The position of the first element of `leaf` that satisfies `matches`.
  package func index(inLeaf leaf: NodeID, where matches: (Element) -> Bool) throws -> Int? {
    guard let local = try store.read(leaf, { $0.isLeaf ? $0.elements.firstIndex(where: matches) : nil }) else {
      return nil
    }
    var index = local
    var child = leaf
    var parent = try store.read(leaf) { $0.parent }
    var depth = 0
    while parent != 0 {
      depth += 1
      guard depth < Self.maxDepth else { throw Self.damage("the parent links from leaf \(leaf) form a cycle") }
      let (before, grandparent) = try store.read(parent) { node -> (Int, NodeID) in
        try Self.checkInner(node, parent)
        var sum = 0
        for (c, id) in node.children.enumerated() {
          if id == child { return (sum, node.parent) }
          sum += node.counts[c]
        }
        throw Self.damage("node \(child) is not a child of its parent \(parent)")
      }
      index += before
      child = parent
      parent = grandparent
    }
    guard child == root else { throw Self.damage("leaf \(leaf) does not lead up to the root") }
    return index
  }

  /// Calls `body` with every element in order, one leaf at a time, until it returns false.
  package func forEach(_ body: (Element) throws -> Bool) throws {
    guard root != 0 else { return }
    try visit(root, body)
  }

  @discardableResult
  private func visit(_ id: NodeID, _ body: (Element) throws -> Bool) throws -> Bool {
    try forEachLeaf { _, elements in
      for element in elements where try !body(element) { return false }
      return true
    }
    return true
  }

  /// Calls `body` with each leaf's id and elements, in order, until it returns false.
  package func forEachLeaf(_ body: (NodeID, [Element]) throws -> Bool) throws {
    guard root != 0 else { return }
    func walk(_ id: NodeID, depth: Int) throws -> Bool {
      guard depth < Self.maxDepth else {
        throw Self.damage("the tree is deeper than \(Self.maxDepth) levels (a cycle?)")
      }
      // One read per node: a stored tree decodes the node on every read.
      let node = try store.read(id) { $0 }
      if node.isLeaf { return try body(id, node.elements) }
      for child in node.children where try !walk(child, depth: depth + 1) { return false }
      return true
    }
    _ = try walk(root, depth: 0)
  }

  /// Every element, in order.
  package func elements() throws -> [Element] {
    var out: [Element] = []
    out.reserveCapacity(count)
    try forEach {
      out.append($0)
      return true
    }
    return out
  }

  // MARK: - Changes

  /// Walks from the root to the leaf that holds position `index`, adding
  /// `delta` to the count of every child passed through (an insert adds one,
  /// a remove takes one): the leaf and the position within it.
  private mutating func descend(to index: Int, adding delta: Int) throws -> (NodeID, Int) {
    var id = root
    var i = index
    for _ in 0..<Self.maxDepth {
      let next: NodeID? = try store.update(id) { node in
        if node.isLeaf { return nil }
        try Self.checkInner(node, id)
        // An insert just past a child's end appends to it, not to the next.
        let c = Self.child(containing: &i, in: node, endGoesLeft: delta > 0)
        node.counts[c] += delta
        return node.children[c]
      }
      guard let next else { return (id, i) }
      id = next
    }
    throw Self.damage("the tree is deeper than \(Self.maxDepth) levels (a cycle?)")
  }

  /// Inserts `element` so that it ends at `index` (0…count).
  package mutating func insert(_ element: Element, at index: Int) throws {
    guard index >= 0 && index <= count else { throw Self.damage("position \(index) is outside 0…\(count)") }
    if root == 0 {
      root = try store.allocate(TreeNode(parent: 0, isLeaf: true))
    }
    let (id, i) = try descend(to: index, adding: 1)
    let capacity = leafCapacity
    let leaf = id
    let overflow = try store.update(id) { node -> Bool in
      guard i <= node.elements.count else { throw Self.damage("leaf \(leaf) is shorter than its parent counts") }
      node.elements.insert(element, at: i)
      return node.elements.count > capacity
    }
    if store.tracksPlacements { try store.placed([element][...], in: id) }
    count += 1
    if overflow { try split(id) }
  }

  /// Removes and returns the element at `index`.
  @discardableResult
  package mutating func remove(at index: Int) throws -> Element {
    guard index >= 0 && index < count else { throw Self.damage("position \(index) is outside its \(count) items") }
    let (id, i) = try descend(to: index, adding: -1)
    let leaf = id
    let element = try store.update(id) { node in
      guard i < node.elements.count else { throw Self.damage("leaf \(leaf) is shorter than its parent counts") }
      return node.elements.remove(at: i)
    }
    count -= 1
    try rebalance(id)
    return element
  }

  /// Replaces the element at `index`, returning the one it held: one leaf
  /// changes, no count (the replacement stays in its place).
  @discardableResult
  package mutating func replace(at index: Int, with element: Element) throws -> Element {
    guard index >= 0 && index < count else { throw Self.damage("position \(index) is outside its \(count) items") }
    let (leaf, offset) = try locate(index)
    return try store.update(leaf) { node in
      guard offset < node.elements.count else { throw Self.damage("leaf \(leaf) is shorter than its parent counts") }
      defer { node.elements[offset] = element }
      return node.elements[offset]
    }
  }

  /// Moves the element at `from` so that it ends at `to`.
  package mutating func move(from: Int, to: Int) throws {
    guard from != to else { return }
    let element = try remove(at: from)
    try insert(element, at: to)
  }

  /// Appends elements in order, filling leaves to three quarters, in O(n).
  /// Only valid on an empty tree.
  package mutating func build<S: Sequence>(_ source: S) throws where S.Element == Element {
    precondition(count == 0, "build fills an empty tree")
    let fill = max(2, leafCapacity * 3 / 4)
    var level: [(NodeID, Int)] = []
    var chunk: [Element] = []
    chunk.reserveCapacity(fill)
    var iterator = source.makeIterator()
    var exhausted = false
    while !exhausted {
      if let element = iterator.next() {
        chunk.append(element)
        if chunk.count < fill { continue }
      } else {
        exhausted = true
        if chunk.isEmpty { break }
      }
      let id = try store.allocate(TreeNode(parent: 0, isLeaf: true, elements: chunk))
      try store.placed(chunk[...], in: id)
      level.append((id, chunk.count))
      count += chunk.count
      chunk.removeAll(keepingCapacity: true)
    }
    guard !level.isEmpty else { return }
    let width = max(2, fanout * 3 / 4)
    while level.count > 1 {
      var next: [(NodeID, Int)] = []
      for start in stride(from: 0, to: level.count, by: width) {
        let group = level[start..<min(start + width, level.count)]
        let id = try store.allocate(
          TreeNode(parent: 0, isLeaf: false, children: group.map(\.0), counts: group.map(\.1)))
        for (child, _) in group { try store.update(child) { $0.parent = id } }
        next.append((id, group.reduce(0) { $0 + $1.1 }))
      }
      level = next
    }
    root = level[0].0
  }

  // MARK: - Structure

  /// Splits an overfull node in two, and its parent in turn if that overflows.
  private mutating func split(_ id: NodeID) throws {
    var id = id
    while true {
      let (parent, isLeaf, width) = try store.read(id) { ($0.parent, $0.isLeaf, $0.width) }
      let capacity = isLeaf ? leafCapacity : fanout
      guard width > capacity else { return }
      let half = width / 2
      var sibling = TreeNode<Element>(parent: parent, isLeaf: isLeaf)
      let leftCount: Int
      let rightCount: Int
      if isLeaf {
        (leftCount, rightCount) = try store.update(id) { node in
          sibling.elements = Array(node.elements[half...])
          node.elements.removeSubrange(half...)
          return (node.elements.count, sibling.elements.count)
        }
      } else {
        (leftCount, rightCount) = try store.update(id) { node in
          sibling.children = Array(node.children[half...])
          sibling.counts = Array(node.counts[half...])
          node.children.removeSubrange(half...)
          node.counts.removeSubrange(half...)
          return (node.counts.reduce(0, +), sibling.counts.reduce(0, +))
        }
      }
      let siblingID = try store.allocate(sibling)
      if isLeaf {
        try store.placed(sibling.elements[...], in: siblingID)
      } else {
        for child in sibling.children { try store.update(child) { $0.parent = siblingID } }
      }
      if parent == 0 {
        let newRoot = try store.allocate(
          TreeNode(parent: 0, isLeaf: false, children: [id, siblingID], counts: [leftCount, rightCount]))
        try store.update(id) { $0.parent = newRoot }
        try store.update(siblingID) { $0.parent = newRoot }
        root = newRoot
        return
      }
      try store.update(parent) { node in
        guard let c = node.children.firstIndex(of: id) else {
          throw Self.damage("node \(id) is not a child of its parent")
        }
        node.counts[c] = leftCount
        node.children.insert(siblingID, at: c + 1)
        node.counts.insert(rightCount, at: c + 1)
      }
      id = parent
    }
  }

  /// Restores the fill invariants after a removal below `id`: removes empty
  /// nodes, merges a node under a quarter full into a sibling, and shortens
  /// the tree when the root has a single child.
  private mutating func rebalance(_ id: NodeID) throws {
    var id = id
    while true {
      let (parent, isLeaf, width) = try store.read(id) { ($0.parent, $0.isLeaf, $0.width) }
      if parent == 0 {
        // The root: an empty tree has none; an inner root with one child hands over to it.
        if width == 0 {
          try store.free(id)
          root = 0
        } else if !isLeaf && width == 1 {
          let child = try store.read(id) { $0.children[0] }
          try store.update(child) { $0.parent = 0 }
          try store.free(id)
          root = child
        }
        return
      }
      let capacity = isLeaf ? leafCapacity : fanout
      if width == 0 {
        try store.update(parent) { node in
          guard let c = node.children.firstIndex(of: id) else {
            throw Self.damage("node \(id) is not a child of its parent")
          }
          node.children.remove(at: c)
          node.counts.remove(at: c)
        }
        try store.free(id)
        id = parent
        continue
      }
      guard width < capacity / 4 else { return }
      // Merge with a neighbour when both fit in one node.
      let (siblings, position) = try store.read(parent) { node in
        guard let position = node.children.firstIndex(of: id) else {
          throw Self.damage("node \(id) is not a child of its parent")
        }
        return (node.children, position)
      }
      var merged = false
      for neighbour in [position + 1, position - 1] where neighbour >= 0 && neighbour < siblings.count {
        let other = siblings[neighbour]
        let otherWidth = try store.read(other) { $0.width }
        guard width + otherWidth <= capacity else { continue }
        let (left, right) = neighbour > position ? (id, other) : (other, id)
        try mergeRight(right, into: left, isLeaf: isLeaf, parent: parent)
        merged = true
        break
      }
      guard merged else { return }
      id = parent
    }
  }

  /// Moves everything of `right` to the end of `left` and drops `right` from `parent`.
  private mutating func mergeRight(_ right: NodeID, into left: NodeID, isLeaf: Bool, parent: NodeID) throws {
    let moved = try store.read(right) { $0 }
    if isLeaf {
      try store.update(left) { $0.elements.append(contentsOf: moved.elements) }
      try store.placed(moved.elements[...], in: left)
    } else {
      try store.update(left) { node in
        node.children.append(contentsOf: moved.children)
        node.counts.append(contentsOf: moved.counts)
      }
      for child in moved.children { try store.update(child) { $0.parent = left } }
    }
    let movedCount = isLeaf ? moved.elements.count : moved.counts.reduce(0, +)
    try store.update(parent) { node in
      guard let r = node.children.firstIndex(of: right) else { throw Self.damage("node \(right) left its parent") }
      node.children.remove(at: r)
      node.counts.remove(at: r)
      guard let l = node.children.firstIndex(of: left) else { throw Self.damage("node \(left) left its parent") }
      node.counts[l] += movedCount
    }
    try store.free(right)
  }
}
