/// An order-statistic B+tree of 32-bit handles in flat buffers: the list a
/// replay folds a stream's events into (`Projection`), where each position
/// holds the handle of a slot kept beside it.
///
/// What makes it cheaper than `CountedTree` (the stored order's algorithm,
/// generic over its node store): elements of 4 bytes instead of a slot's
/// 24, nodes in flat buffers instead of arrays of arrays, no checks for
/// damage (nothing here was read from disk), and a cursor — the leaf the
/// last operation touched, where it starts, and the path to it — so that an
/// edit next to the last one (typing, a chat's appends) touches one leaf and
/// adds one to a count per level instead of searching from the root.
///
/// Leaves hold up to 128 handles, inner nodes up to 32 children. A leaf
/// that empties leaves its parent, and one that falls under a quarter full
/// is merged into a neighbour with room; an inner node leaves its parent
/// once it has no child, and a root with one child gives way to it.
///
/// A value holding a pointer to its state, so that using it costs no
/// reference counting: its owner frees it (`deallocate`), once.
struct PositionTree {
  static let leafCapacity = 128
  static let fanout = 32
  /// Deep enough for 2^32 handles (128 · 32^5).
  static let maxHeight = 8

  /// The tree's fields, behind a pointer: a class's own stored `var`s
  /// would be checked for exclusive access at every use, and a class
  /// retained and released around each call, which cost more than the
  /// tree's work.
  struct State {
    var count = 0
    /// 0: the root is a leaf.
    var height = 0
    var root: Int32 = -1

    var leafElements: UnsafeMutablePointer<UInt32>
    var leafLength: UnsafeMutablePointer<Int32>
    var leafCapacityUsed = 0
    var leafSlots: Int
    var freeLeaves: [Int32] = []

    var innerChildren: UnsafeMutablePointer<Int32>
    var innerCounts: UnsafeMutablePointer<Int32>
    var innerLength: UnsafeMutablePointer<Int32>
    var innerCapacityUsed = 0
    var innerSlots: Int
    var freeInners: [Int32] = []

    /// The cursor: the leaf the last operation touched, the position of its
    /// first element, and the path from the root to it (the inner node and
    /// the child's slot in it, per level, the root's first). `leaf` -1: none.
    var cursorLeaf: Int32 = -1
    var cursorStart = 0
    var path: UnsafeMutablePointer<(node: Int32, slot: Int32)>
  }

  private let s: UnsafeMutablePointer<State>

  /// How many handles the tree holds.
  var count: Int { s.pointee.count }

  init() {
    s = .allocate(capacity: 1)
    s.initialize(
      to: State(
        leafElements: .allocate(capacity: 16 * Self.leafCapacity), leafLength: .allocate(capacity: 16), leafSlots: 16,
        innerChildren: .allocate(capacity: 4 * Self.fanout), innerCounts: .allocate(capacity: 4 * Self.fanout),
        innerLength: .allocate(capacity: 4), innerSlots: 4, path: .allocate(capacity: Self.maxHeight)))
  }

  /// Frees the tree; it must not be used again.
  func deallocate() {
    s.pointee.leafElements.deallocate()
    s.pointee.leafLength.deallocate()
    s.pointee.innerChildren.deallocate()
    s.pointee.innerCounts.deallocate()
    s.pointee.innerLength.deallocate()
    s.pointee.path.deallocate()
    s.deinitialize(count: 1)
    s.deallocate()
  }

  /// A copy sharing nothing with this one.
  func copy() -> PositionTree {
    let copy = PositionTree()
    forEach { copy.insert($0, at: copy.count) }
    return copy
  }

  // MARK: - Nodes

  private func elements(_ leaf: Int32) -> UnsafeMutablePointer<UInt32> {
    s.pointee.leafElements + Int(leaf) * Self.leafCapacity
  }

  private func children(_ node: Int32) -> UnsafeMutablePointer<Int32> { s.pointee.innerChildren + Int(node) * Self.fanout }
  private func counts(_ node: Int32) -> UnsafeMutablePointer<Int32> { s.pointee.innerCounts + Int(node) * Self.fanout }

  private func newLeaf() -> Int32 {
    if let free = s.pointee.freeLeaves.popLast() {
      s.pointee.leafLength[Int(free)] = 0
      return free
    }
    if s.pointee.leafCapacityUsed == s.pointee.leafSlots {
      let slots = s.pointee.leafSlots * 2
      s.pointee.leafElements = Self.grow(s.pointee.leafElements, from: s.pointee.leafSlots * Self.leafCapacity, to: slots * Self.leafCapacity)
      s.pointee.leafLength = Self.grow(s.pointee.leafLength, from: s.pointee.leafSlots, to: slots)
      s.pointee.leafSlots = slots
    }
    let leaf = Int32(s.pointee.leafCapacityUsed)
    s.pointee.leafCapacityUsed += 1
    s.pointee.leafLength[Int(leaf)] = 0
    return leaf
  }

  private func newInner() -> Int32 {
    if let free = s.pointee.freeInners.popLast() {
      s.pointee.innerLength[Int(free)] = 0
      return free
    }
    if s.pointee.innerCapacityUsed == s.pointee.innerSlots {
      let slots = s.pointee.innerSlots * 2
      s.pointee.innerChildren = Self.grow(s.pointee.innerChildren, from: s.pointee.innerSlots * Self.fanout, to: slots * Self.fanout)
      s.pointee.innerCounts = Self.grow(s.pointee.innerCounts, from: s.pointee.innerSlots * Self.fanout, to: slots * Self.fanout)
      s.pointee.innerLength = Self.grow(s.pointee.innerLength, from: s.pointee.innerSlots, to: slots)
      s.pointee.innerSlots = slots
    }
    let node = Int32(s.pointee.innerCapacityUsed)
    s.pointee.innerCapacityUsed += 1
    s.pointee.innerLength[Int(node)] = 0
    return node
  }

  private static func grow<T>(_ old: UnsafeMutablePointer<T>, from: Int, to: Int) -> UnsafeMutablePointer<T> {
    let new = UnsafeMutablePointer<T>.allocate(capacity: to)
    new.moveInitialize(from: old, count: from)
    old.deallocate()
    return new
  }

  // MARK: - Finding a position

  /// The leaf holding `position` (for an insert, the leaf it goes into:
  /// a position at a leaf's end stays in that leaf), its offset there, and
  /// the path to it in `path`; through the cursor when it holds the position.
  @inline(__always)
  private func leaf(at position: Int, inserting: Bool) -> (leaf: Int32, offset: Int) {
    if s.pointee.cursorLeaf >= 0 {
      let offset = position - s.pointee.cursorStart
      let length = Int(s.pointee.leafLength[Int(s.pointee.cursorLeaf)])
      if offset >= 0 && (offset < length || (inserting && offset == length)) { return (s.pointee.cursorLeaf, offset) }
    }
    var node = s.pointee.root
    var i = position
    for level in 0..<s.pointee.height {
      let c = counts(node)
      let last = Int(s.pointee.innerLength[Int(node)]) - 1
      var slot = 0
      if inserting {
        while slot < last && i > Int(c[slot]) {
          i -= Int(c[slot])
          slot += 1
        }
      } else {
        while slot < last && i >= Int(c[slot]) {
          i -= Int(c[slot])
          slot += 1
        }
      }
      s.pointee.path[level] = (node, Int32(slot))
      node = children(node)[slot]
    }
    s.pointee.cursorLeaf = node
    s.pointee.cursorStart = position - i
    return (node, i)
  }

  /// Adds `delta` to the count of every node on the path to the cursor.
  @inline(__always)
  private func adjustPath(by delta: Int32) {
    for level in 0..<s.pointee.height {
      let (node, slot) = s.pointee.path[level]
      counts(node)[Int(slot)] += delta
    }
  }

  // MARK: - Operations

  /// The handle at `position` (0..<count).
  func element(at position: Int) -> UInt32 {
    precondition(position >= 0 && position < count)
    let (leaf, offset) = leaf(at: position, inserting: false)
    return elements(leaf)[offset]
  }

  /// Replaces the handle at `position`.
  func replace(at position: Int, with handle: UInt32) {
    precondition(position >= 0 && position < count)
    let (leaf, offset) = leaf(at: position, inserting: false)
    elements(leaf)[offset] = handle
  }

  /// Inserts `handle` at `position` (0...count).
  func insert(_ handle: UInt32, at position: Int) {
    precondition(position >= 0 && position <= count)
    if s.pointee.root < 0 {
      s.pointee.root = newLeaf()
      s.pointee.height = 0
    }
    let (leaf, offset) = leaf(at: position, inserting: true)
    let length = Int(s.pointee.leafLength[Int(leaf)])
    s.pointee.count += 1
    if length < Self.leafCapacity {
      let e = elements(leaf)
      (e + offset + 1).update(from: e + offset, count: length - offset)
      e[offset] = handle
      s.pointee.leafLength[Int(leaf)] = Int32(length + 1)
      adjustPath(by: 1)
      return
    }
    // A full leaf splits: in half, or — an append at its end — into itself
    // full and a new leaf of the one handle, so that appends fill leaves.
    let right = newLeaf()
    let keep = offset == length ? length : length / 2
    let e = elements(leaf)
    let r = elements(right)
    r.update(from: e + keep, count: length - keep)
    var leftLength = keep
    var rightLength = length - keep
    if offset <= keep && offset < length {
      (e + offset + 1).update(from: e + offset, count: keep - offset)
      e[offset] = handle
      leftLength += 1
    } else {
      let at = offset - keep
      (r + at + 1).update(from: r + at, count: rightLength - at)
      r[at] = handle
      rightLength += 1
    }
    s.pointee.leafLength[Int(leaf)] = Int32(leftLength)
    s.pointee.leafLength[Int(right)] = Int32(rightLength)
    insertChild(right, count: Int32(rightLength), after: leaf, leftCount: Int32(leftLength), level: s.pointee.height - 1)
    s.pointee.cursorLeaf = -1
  }

  /// Puts `child` (of `childCount` handles) right after `left` in the
  /// parent at `level` of the cursor's path (-1: `left` is the root),
  /// whose count of `left` becomes `leftCount`; counts above grow by one.
  private func insertChild(_ child: Int32, count childCount: Int32, after left: Int32, leftCount: Int32, level: Int) {
    if level < 0 {
      let newRoot = newInner()
      children(newRoot)[0] = left
      counts(newRoot)[0] = leftCount
      children(newRoot)[1] = child
      counts(newRoot)[1] = childCount
      s.pointee.innerLength[Int(newRoot)] = 2
      s.pointee.root = newRoot
      s.pointee.height += 1
      return
    }
    let (node, slotOfLeft) = s.pointee.path[level]
    let slot = Int(slotOfLeft) + 1
    let length = Int(s.pointee.innerLength[Int(node)])
    counts(node)[Int(slotOfLeft)] = leftCount
    if length < Self.fanout {
      let c = children(node)
      let n = counts(node)
      (c + slot + 1).update(from: c + slot, count: length - slot)
      (n + slot + 1).update(from: n + slot, count: length - slot)
      c[slot] = child
      n[slot] = childCount
      s.pointee.innerLength[Int(node)] = Int32(length + 1)
      for above in 0..<level {
        let (node, slot) = s.pointee.path[above]
        counts(node)[Int(slot)] += 1
      }
      return
    }
    // A full inner node splits the same way a leaf does (the buffers may
    // move as the new node is made: pointers into them are taken after).
    let right = newInner()
    let c = children(node)
    let n = counts(node)
    let keep = slot == length ? length : length / 2
    let rc = children(right)
    let rn = counts(right)
    rc.update(from: c + keep, count: length - keep)
    rn.update(from: n + keep, count: length - keep)
    var leftLength = keep
    var rightLength = length - keep
    if slot <= keep && slot < length {
      (c + slot + 1).update(from: c + slot, count: keep - slot)
      (n + slot + 1).update(from: n + slot, count: keep - slot)
      c[slot] = child
      n[slot] = childCount
      leftLength += 1
    } else {
      let at = slot - keep
      (rc + at + 1).update(from: rc + at, count: rightLength - at)
      (rn + at + 1).update(from: rn + at, count: rightLength - at)
      rc[at] = child
      rn[at] = childCount
      rightLength += 1
    }
    s.pointee.innerLength[Int(node)] = Int32(leftLength)
    s.pointee.innerLength[Int(right)] = Int32(rightLength)
    var leftSum: Int32 = 0
    for k in 0..<leftLength { leftSum += n[k] }
    var rightSum: Int32 = 0
    for k in 0..<rightLength { rightSum += rn[k] }
    insertChild(right, count: rightSum, after: node, leftCount: leftSum, level: level - 1)
  }

  /// Removes and returns the handle at `position` (0..<count).
  @discardableResult
  func remove(at position: Int) -> UInt32 {
    precondition(position >= 0 && position < count)
    let (leaf, offset) = leaf(at: position, inserting: false)
    let e = elements(leaf)
    let handle = e[offset]
    let length = Int(s.pointee.leafLength[Int(leaf)]) - 1
    (e + offset).update(from: e + offset + 1, count: length - offset)
    s.pointee.leafLength[Int(leaf)] = Int32(length)
    s.pointee.count -= 1
    adjustPath(by: -1)
    if s.pointee.height > 0 && length < Self.leafCapacity / 4 { shrink(leaf, length: length) }
    return handle
  }

  /// A leaf fallen under a quarter full: gone when empty, else merged into
  /// a neighbour under the same parent that has room for it.
  private func shrink(_ leaf: Int32, length: Int) {
    let (parent, slot) = s.pointee.path[s.pointee.height - 1]
    let siblings = Int(s.pointee.innerLength[Int(parent)])
    let c = children(parent)
    let n = counts(parent)
    var absorbed = Int(slot)
    if length > 0 {
      // Into the left neighbour, or take the right one in.
      if slot > 0, Int(s.pointee.leafLength[Int(c[Int(slot) - 1])]) + length <= Self.leafCapacity {
        let left = c[Int(slot) - 1]
        let l = Int(s.pointee.leafLength[Int(left)])
        (elements(left) + l).update(from: elements(leaf), count: length)
        s.pointee.leafLength[Int(left)] = Int32(l + length)
        n[Int(slot) - 1] += Int32(length)
      } else if Int(slot) + 1 < siblings, Int(s.pointee.leafLength[Int(c[Int(slot) + 1])]) + length <= Self.leafCapacity {
        let right = c[Int(slot) + 1]
        let r = Int(s.pointee.leafLength[Int(right)])
        (elements(leaf) + length).update(from: elements(right), count: r)
        s.pointee.leafLength[Int(leaf)] = Int32(length + r)
        n[Int(slot)] += Int32(r)
        absorbed = Int(slot) + 1
      } else {
        return
      }
    }
    s.pointee.freeLeaves.append(c[absorbed])
    removeChild(at: absorbed, of: parent, level: s.pointee.height - 1)
    s.pointee.cursorLeaf = -1
  }

  /// Takes the child at `slot` out of `node` (at `level` of the path); an
  /// inner node left empty leaves its own parent, a root of one child
  /// gives way to it.
  private func removeChild(at slot: Int, of node: Int32, level: Int) {
    let length = Int(s.pointee.innerLength[Int(node)]) - 1
    let c = children(node)
    let n = counts(node)
    (c + slot).update(from: c + slot + 1, count: length - slot)
    (n + slot).update(from: n + slot + 1, count: length - slot)
    s.pointee.innerLength[Int(node)] = Int32(length)
    if length == 0 && level > 0 {
      s.pointee.freeInners.append(node)
      let (parent, parentSlot) = s.pointee.path[level - 1]
      removeChild(at: Int(parentSlot), of: parent, level: level - 1)
      return
    }
    if level == 0 {
      // The root: empty (the tree is), or one child that takes its place.
      while s.pointee.height > 0 && s.pointee.innerLength[Int(s.pointee.root)] <= 1 {
        let old = s.pointee.root
        if s.pointee.innerLength[Int(old)] == 0 {
          s.pointee.root = -1
          s.pointee.height = 0
          s.pointee.freeLeaves.removeAll()
          s.pointee.freeInners.removeAll()
          s.pointee.leafCapacityUsed = 0
          s.pointee.innerCapacityUsed = 0
          return
        }
        s.pointee.root = children(old)[0]
        s.pointee.height -= 1
        s.pointee.freeInners.append(old)
      }
    }
  }

  // MARK: - Walking

  /// Calls `body` with every handle in order.
  func forEach(_ body: (UInt32) throws -> Void) rethrows {
    guard s.pointee.root >= 0 else { return }
    try walk(s.pointee.root, height: s.pointee.height, body)
  }

  private func walk(_ node: Int32, height: Int, _ body: (UInt32) throws -> Void) rethrows {
    if height == 0 {
      let e = elements(node)
      for k in 0..<Int(s.pointee.leafLength[Int(node)]) { try body(e[k]) }
      return
    }
    let c = children(node)
    for k in 0..<Int(s.pointee.innerLength[Int(node)]) { try walk(c[k], height: height - 1, body) }
  }
}
