/// The change set that turns a stream as of one seq into the stream as of
/// another, in the form a collection view's batch update takes.
///
/// Removals carry indices in the old list, insertions indices in the new
/// one, moves an old index and a new index — UIKit's `performBatchUpdates`
/// semantics. The moves are as few as possible: of the items present at both
/// seqs, those that keep their relative order (a longest increasing
/// subsequence of their new indices, taken in old order) stay put, and only
/// the others move. Items present at both seqs whose text differs are
/// reloaded (UIKit's `reloadItems`), by their index in the new list.
public struct StreamDiff: Equatable, Sendable {
  public struct Removal: Equatable, Sendable {
    /// Index in the old list.
    public var index: Int
    public var item: Item
  }

  public struct Insertion: Equatable, Sendable {
    /// Index in the new list.
    public var index: Int
    public var item: Item
  }

  /// An item at both seqs whose text changed (an edit).
  public struct Reload: Equatable, Sendable {
    /// Index in the new list.
    public var index: Int
    /// The item as it is in the new list.
    public var item: Item
  }

  public struct Move: Equatable, Sendable {
    /// Index in the old list.
    public var from: Int
    /// Index in the new list.
    public var to: Int
    public var id: ItemID
  }

  public var stream: StreamName
  /// The seqs of the old and the new list.
  public var from: UInt64
  public var to: UInt64
  /// By descending index.
  public var removed: [Removal] = []
  /// By ascending index.
  public var inserted: [Insertion] = []
  /// By ascending target index.
  public var moved: [Move] = []
  /// By ascending index (in the new list).
  public var edited: [Reload] = []

  public var isEmpty: Bool { removed.isEmpty && inserted.isEmpty && moved.isEmpty && edited.isEmpty }

  /// The diff from `old` to `new` (two snapshots of one stream). O(n log n).
  public init(from old: StreamContents, to new: StreamContents) {
    stream = new.stream
    from = old.seq
    to = new.seq
    var newIndex: [ItemID: Int] = [:]
    newIndex.reserveCapacity(new.items.count)
    for (index, item) in new.items.enumerated() { newIndex[item.id] = index }
    var inOld: [ItemID: Int] = [:]
    inOld.reserveCapacity(old.items.count)
    // Items at both seqs, in old order, with their new indices.
    var kept: [(old: Int, new: Int, id: ItemID)] = []
    for (index, item) in old.items.enumerated() {
      inOld[item.id] = index
      if let target = newIndex[item.id] {
        kept.append((index, target, item.id))
      } else {
        removed.append(Removal(index: index, item: item))
      }
    }
    removed.reverse()
    for (index, item) in new.items.enumerated() {
      if let before = inOld[item.id] {
        if old.items[before].text != item.text { edited.append(Reload(index: index, item: item)) }
      } else {
        inserted.append(Insertion(index: index, item: item))
      }
    }
    let stays = StreamDiff.longestIncreasingSubsequence(kept.map(\.new))
    for (position, entry) in kept.enumerated() where !stays[position] {
      moved.append(Move(from: entry.old, to: entry.new, id: entry.id))
    }
    moved.sort { $0.to < $1.to }
  }

  /// Which positions of `values` (distinct integers) form one longest
  /// strictly increasing subsequence. Of several, the one that keeps the
  /// earliest items (so that a card dragged to the top shows as that card
  /// moving, not the others). O(n log n): from the right, the length of the
  /// longest run starting at each position (patience sorting); then from the
  /// left, the first position that can continue the longest run.
  static func longestIncreasingSubsequence(_ values: [Int]) -> [Bool] {
    let n = values.count
    var runFrom = [Int](repeating: 0, count: n)
    // tails[k]: the largest first value of an increasing run of length k+1
    // in the suffix seen so far; it decreases with k.
    var tails: [Int] = []
    for i in stride(from: n - 1, through: 0, by: -1) {
      let value = values[i]
      var lo = 0
      var hi = tails.count
      while lo < hi {
        let mid = (lo + hi) / 2
        if tails[mid] > value { lo = mid + 1 } else { hi = mid }
      }
      runFrom[i] = lo + 1
      if lo == tails.count { tails.append(value) } else { tails[lo] = value }
    }
    var member = [Bool](repeating: false, count: n)
    var remaining = tails.count
    var last = Int.min
    for i in 0..<n where remaining > 0 && runFrom[i] == remaining && values[i] > last {
      member[i] = true
      last = values[i]
      remaining -= 1
    }
    return member
  }

  /// Applies the diff to the old list as `performBatchUpdates` does:
  /// removals and moves' sources by old index, insertions and moves'
  /// targets by new index, and the items that stay fill the remaining
  /// places in their old order; then the reloads, by new index. The result
  /// is the list at B, item for item and text for text (an item edited
  /// back to its text at A is no reload, and keeps its old `edited`).
  public func apply(to old: [Item]) -> [Item] {
    let count = old.count - removed.count + inserted.count
    var result = [Item?](repeating: nil, count: count)
    var leaving = Set(removed.map(\.index))
    for move in moved { leaving.insert(move.from) }
    for insertion in inserted { result[insertion.index] = insertion.item }
    for move in moved { result[move.to] = old[move.from] }
    var staying = old.indices.lazy.filter { !leaving.contains($0) }.makeIterator()
    for index in result.indices where result[index] == nil {
      guard let next = staying.next() else { break }
      result[index] = old[next]
    }
    for reload in edited where result.indices.contains(reload.index) { result[reload.index] = reload.item }
    return result.compactMap { $0 }
  }
}
