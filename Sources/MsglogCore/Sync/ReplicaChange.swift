/// A write made on a replica, kept pending until its remote has done it:
/// what its user meant, in terms that hold however the remote's log has
/// moved on meanwhile (docs/SYNC.md, "Where the user meant it").
///
/// Positions are not kept as indices, which others' writes shift, but as
/// the items the user saw before the place they chose (`after`, nearest
/// first): the remote puts an insert or a move right after the first of
/// them still live, which is exactly the user's index when nothing else
/// changed — the predecessor rule of `--rebase`. An append lands at the end
/// of the stream as it is at the remote (a chat message goes after what
/// others sent meanwhile); a remove and an edit name their item; an undo
/// names the event, or the earlier change, it undoes.
public struct ReplicaChange: Equatable, Sendable {
  /// The change's number on its replica: 1, 2, 3 … for the replica's life.
  public var number: UInt64
  /// When it was made, by the replica's clock.
  public var made: Timestamp
  /// The replica's last event when it was made (its list was that, with
  /// the changes pending then on top).
  public var basis: UInt64
  public var stream: StreamName
  public var intent: Intent

  /// At most this many items are kept in `after`; when all of them are
  /// gone at the remote, the walk goes on from the last by restore's rule.
  public static let predecessorLimit = 16

  public enum Intent: Equatable, Sendable {
    /// At the end of the stream; `seen` is the index the user saw it at.
    case append(id: ItemID, text: String, sender: String?, seen: Int)
    /// Right after the first live item of `after` (at 0 when none).
    case insert(id: ItemID, text: String, sender: String?, after: [ItemID], seen: Int)
    /// The item `id` right after the first live item of `after`; the user
    /// moved it from `from` to `to` of the list they saw.
    case move(id: ItemID, after: [ItemID], from: Int, to: Int)
    case remove(id: ItemID)
    case edit(id: ItemID, text: String, sender: String?)
    /// Back after its predecessor by restore's own rule (`after` nil), or
    /// placed as an insert is.
    case restore(id: ItemID, after: [ItemID]?, seen: Int)
    /// `sender`: who undid (an undo's edit names them).
    case undo(UndoTarget, sender: String?)
  }

  /// What an undo undoes: an event of the log, or an earlier change of the
  /// same replica, which the remote resolves to the event it became.
  public enum UndoTarget: Equatable, Sendable {
    case event(seq: UInt64)
    case change(UInt64)
  }

  public init(number: UInt64, made: Timestamp, basis: UInt64, stream: StreamName, intent: Intent) {
    self.number = number
    self.made = made
    self.basis = basis
    self.stream = stream
    self.intent = intent
  }

  /// The op as `log` and the refusal list name it.
  public var opName: String {
    switch intent {
    case .append: return "append"
    case .insert: return "insert"
    case .move: return "move"
    case .remove: return "remove"
    case .edit: return "edit"
    case .restore: return "restore"
    case .undo: return "undo"
    }
  }

  /// The op's name after its article, for a sentence: "an append", "a move".
  public var anOpName: String {
    switch intent {
    case .append, .insert, .edit, .undo: return "an " + opName
    case .move, .remove, .restore: return "a " + opName
    }
  }

  /// The index the user saw the item end at, for the changes that place one.
  public var seenIndex: Int? {
    switch intent {
    case .append(_, _, _, let seen), .insert(_, _, _, _, let seen), .restore(_, _, let seen): return seen
    case .move(_, _, _, let to): return to
    case .remove, .edit, .undo: return nil
    }
  }

  /// The id of the item it inserts (an append, an insert), whose id entry
  /// keeps the seq of that insert for good.
  public var insertedID: ItemID? {
    switch intent {
    case .append(let id, _, _, _), .insert(let id, _, _, _, _): return id
    case .move, .remove, .edit, .restore, .undo: return nil
    }
  }

  /// Whether the remote may put it elsewhere than the user saw it (the
  /// changes counted as rebased when it does).
  public var places: Bool {
    switch intent {
    case .append, .insert, .move: return true
    case .remove, .edit, .restore, .undo: return false
    }
  }
}

/// What the remote did with a change: done for good, whatever happens to
/// the answer — a retry gets the same one.
public enum ChangeOutcome: Equatable, Sendable {
  /// Appended as the event at `seq`; `rebased` when it landed elsewhere
  /// than the index its user saw.
  case applied(seq: UInt64, rebased: Bool)
  /// It changed nothing there (a move onto itself, the same text, an undo
  /// in effect): nothing appended.
  case unchanged
  /// Refused, and why: a code with its data (`ChangeRefusal`), never words.
  case refused(ChangeRefusal)
}

extension ReplicaChange.Intent {
  /// The same intent with `sender` as its sender, where it has one (a
  /// change pushed through a named token is sent as the token's name).
  package func sent(as sender: String) -> Self {
    switch self {
    case .append(let id, let text, _, let seen): return .append(id: id, text: text, sender: sender, seen: seen)
    case .insert(let id, let text, _, let after, let seen):
      return .insert(id: id, text: text, sender: sender, after: after, seen: seen)
    case .edit(let id, let text, _): return .edit(id: id, text: text, sender: sender)
    case .undo(let target, _): return .undo(target, sender: sender)
    case .move, .remove, .restore: return self
    }
  }
}
