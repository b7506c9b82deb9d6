extension ListChange {
  /// The changes that turn `old` into `new` when applied one after the
  /// other (`apply(to:)`): first the removals, from the end; then, from the
  /// front of `new`, each insert and each move to the place right after
  /// the item it follows there; then an `update` for each item in both
  /// whose value differs (its text, `pending`, seq, time…).
  ///
  /// The moves are as few as possible: the items in both lists that keep
  /// their relative order (a longest increasing subsequence, as in
  /// `StreamDiff`) stay put, only the others move — a confirmed message
  /// never leaves and comes back. An id found twice in `old` (a list that
  /// went wrong) has its second copy removed; twice in `new`, its second
  /// copy is inserted. O(n log n).
  package static func changes(from old: [Item], to new: [Item]) -> [ListChange] {
    var newIndex: [ItemID: Int] = [:]
    newIndex.reserveCapacity(new.count)
    for (index, item) in new.enumerated() where newIndex[item.id] == nil { newIndex[item.id] = index }

    // Which old items leave, and which stay with their place in `new`.
    var oldItem: [ItemID: Item] = [:]
    oldItem.reserveCapacity(old.count)
    var kept: [(id: ItemID, target: Int)] = []
    var changes: [ListChange] = []
    var leaving: [(id: ItemID, at: Int)] = []
    for (index, item) in old.enumerated() {
      if oldItem[item.id] == nil, let target = newIndex[item.id] {
        oldItem[item.id] = item
        kept.append((item.id, target))
      } else {
        leaving.append((item.id, index))
      }
    }
    for (id, at) in leaving.reversed() { changes.append(.remove(id: id, at: at)) }

    let stays = StreamDiff.longestIncreasingSubsequence(kept.map(\.target))
    // An id twice in `new` (never from a log) arrives the second time.
    var order = SlotOrder(kept: kept, stays: stays, new: new) {
      oldItem[new[$0].id] != nil && newIndex[new[$0].id] == $0
    }
    for (target, item) in new.enumerated() {
      switch order.role[target] {
      case .stays:
        continue
      case .moves:
        let from = order.take(order.oldSlot[item.id]!)
        let to = order.place(order.newSlot[target])
        if from != to { changes.append(.move(id: item.id, from: from, to: to)) }
      case .arrives:
        changes.append(.insert(item, at: order.place(order.newSlot[target])))
      }
    }
    for (index, item) in new.enumerated() {
      if let before = oldItem[item.id], newIndex[item.id] == index, before != item {
        changes.append(.update(item, at: index))
      }
    }
    return changes
  }
}

/// Where each item of a list diff is at every step. Every place an item is
/// ever in gets a slot in one fixed order, and the list is always its
/// filled slots in that order: a Fenwick tree of which slots are filled
/// gives each position in O(log n), and once each item is in its place in
/// `new` (those slots lie in `new`'s order) the list is `new`.
///
/// The order: each item that stays, followed by the items `new` puts after
/// it up to the next that stays, then by the places the moving items leave
/// there (their old places up to the next that stays); before the first
/// that stays, the same two runs. So each item lands right after the one
/// it follows in `new`, and a moving item already there is not moved.
private struct SlotOrder {
  enum Role { case stays, moves, arrives }

  /// The role of each item of `new`, by its index there.
  var role: [Role]
  /// The slot of each item of `new` in its place there.
  var newSlot: [Int]
  /// The slot a moving item leaves.
  var oldSlot: [ItemID: Int]
  /// A Fenwick tree over the slots: 1 where an item is.
  private var filled: [Int]

  init(kept: [(id: ItemID, target: Int)], stays: [Bool], new: [Item], isKept: (Int) -> Bool) {
    role = new.indices.map { isKept($0) ? .moves : .arrives }
    for (position, entry) in kept.enumerated() where stays[position] { role[entry.target] = .stays }
    // Runs, by the staying item they follow (0: before the first).
    var following: [[Int]] = [[]]  // indices in `new` of what arrives or moves there
    for index in new.indices {
      if role[index] == .stays { following.append([]) } else { following[following.count - 1].append(index) }
    }
    var leftBehind: [[ItemID]] = [[]]  // moving items' old places
    for (position, entry) in kept.enumerated() {
      if stays[position] { leftBehind.append([]) } else { leftBehind[leftBehind.count - 1].append(entry.id) }
    }
    var newSlots = [Int](repeating: 0, count: new.count)
    var oldSlots: [ItemID: Int] = [:]
    var present: [Bool] = []
    func lay(_ run: Int) {
      for index in following[run] {
        newSlots[index] = present.count
        present.append(false)
      }
      for id in leftBehind[run] {
        oldSlots[id] = present.count
        present.append(true)
      }
    }
    lay(0)
    var run = 0
    for index in new.indices where role[index] == .stays {
      run += 1
      newSlots[index] = present.count
      present.append(true)
      lay(run)
    }
    (newSlot, oldSlot) = (newSlots, oldSlots)
    // Built in O(n): each node takes its sum up to its parent.
    filled = [0] + present.map { $0 ? 1 : 0 }
    for node in 1..<filled.count {
      let parent = node + (node & -node)
      if parent < filled.count { filled[parent] += filled[node] }
    }
  }

  /// How many filled slots come before `slot`.
  private func before(_ slot: Int) -> Int {
    var sum = 0
    var node = slot
    while node > 0 {
      sum += filled[node]
      node -= node & -node
    }
    return sum
  }

  private mutating func add(_ delta: Int, at slot: Int) {
    var node = slot + 1
    while node < filled.count {
      filled[node] += delta
      node += node & -node
    }
  }

  /// Empties `slot`; its item's position just before.
  mutating func take(_ slot: Int) -> Int {
    defer { add(-1, at: slot) }
    return before(slot)
  }

  /// Fills `slot`; its item's position.
  mutating func place(_ slot: Int) -> Int {
    defer { add(1, at: slot) }
    return before(slot)
  }
}
