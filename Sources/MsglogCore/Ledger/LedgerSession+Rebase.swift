/// `--rebase`: a command made at an older version of the stream, applied as
/// its user meant it there (docs/REFERENCE.md, "Working together"). An
/// insert or a move is placed after its predecessor in the list it was made
/// on; a remove or an edit names its item by id and applies as it is. The
/// event appended is a plain one with the head's indices: replay is
/// unchanged.
extension LedgerSession {
  /// Where an insert made at `index` of the list at version `basis` goes
  /// now: right after the first item walking back from `index - 1` in that
  /// list that is still live (0 when none is).
  func rebasedInsertIndex(_ index: Int, from basis: UInt64, in state: inout StreamState) throws -> Int {
    let later = try events(after: basis, of: state)
    let count = later.pastCount(now: state.tree.count)
    guard (0...count).contains(index) else {
      throw MsglogError.outOfRangeAtVersion(stream: state.head.stream, version: basis, index: index, count: count)
    }
    return place(after: try anchor(among: (0..<index).reversed(), through: later, in: &state))
  }

  /// The move now for a move `from` → `to` made on the list at version
  /// `basis`: the item is the one at `from` there; in that list with the
  /// move applied it follows the item before it, so at the head it goes
  /// right after the first item walking back from there that is still live.
  func rebasedMove(from: Int, to: Int, from basis: UInt64, in state: inout StreamState) throws
    -> (from: Int, to: Int, id: ItemID?)
  {
    let later = try events(after: basis, of: state)
    let count = later.pastCount(now: state.tree.count)
    for index in [from, to] where !(0..<count).contains(index) {
      throw MsglogError.outOfRangeAtVersion(stream: state.head.stream, version: basis, index: index, count: count)
    }
    let moved: ItemID
    let now: Int
    switch later.follow(from) {
    case .at(let index):
      moved = try state.tree.element(at: index).id
      now = index
    case .named(let id):
      guard let index = try liveIndex(of: id, in: &state) else {
        throw MsglogError.itemRemoved(id, removeSeq: try idEntry(id)?.removeSeq ?? 0)
      }
      moved = id
      now = index
    }
    // Position q < to of the list with the move applied is position q of
    // the list without the item, so q, or q + 1 past `from`, at `basis`.
    let candidates = (0..<to).reversed().lazy.map { $0 < from ? $0 : $0 + 1 }
    let anchor = try anchor(among: candidates, through: later, in: &state)
    return (now, place(after: anchor, moving: now), moved)
  }
}
