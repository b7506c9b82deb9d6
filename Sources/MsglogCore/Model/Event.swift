/// One immutable entry of the log: a change to one stream.
public struct Event: Equatable, Sendable {
  /// Global sequence number: 1, 2, 3 … across all streams, no gaps.
  public var seq: UInt64
  public var stream: StreamName
  /// The stream's own event counter: 1, 2, 3 …
  public var version: UInt64
  /// Wall-clock time of the append.
  public var time: Timestamp
  public var op: Op
  /// The seq of the event (of the same stream) this one undoes; nil when it
  /// undoes none. An event is undone while an event undoing it stands that
  /// is not itself undone.
  public var undoes: UInt64?
  /// The replica change this event was made from; nil for an event written
  /// on the log itself.
  public var origin: Origin?
  /// For an insert or an edit whose item was erased: the seq of the erase
  /// event. Its text is then empty and it names no sender; its slot (seq,
  /// version, time, positions) is what it always was. For an edit whose
  /// sender alone was taken off (`Op.unsign`): that event's seq; the edit
  /// keeps its text.
  public var erased: UInt64?

  public init(
    seq: UInt64, stream: StreamName, version: UInt64, time: Timestamp, op: Op, undoes: UInt64? = nil,
    origin: Origin? = nil, erased: UInt64? = nil
  ) {
    self.seq = seq
    self.stream = stream
    self.version = version
    self.time = time
    self.op = op
    self.undoes = undoes
    self.origin = origin
    self.erased = erased
  }

  /// What the event does to the stream's ordered array (the event table of
  /// docs/REFERENCE.md, "Concepts"), as the log records it.
  ///
  /// Positions are `UInt64`s, as stored (FORMAT.md): for a live list in
  /// `Int` positions, with the whole item a restore or an edit brings, read
  /// the event as an `ItemChange` (`LogSnapshot.change(for:)`,
  /// `EventLog.changes(from:stream:)`), which also applies itself to an
  /// `[Item]`. Every index is one of the stream's list just before the
  /// event (a move's `to`: of the list after it).
  public enum Op: Equatable, Sendable {
    /// `array.insert(item, at: index)`: a new item `id` with `text`, written
    /// by `sender` (nil: nobody named), at the event's `time` and `seq`.
    case insert(id: ItemID, index: UInt64, text: String, sender: String?)
    /// Removes the item whose id is `id`, wherever it is. `index` is where it
    /// was: recorded so that replay finds it without searching, and checks it.
    case remove(id: ItemID, index: UInt64)
    /// `array.insert(array.remove(at: from), at: to)`; `id` is the moved item,
    /// recorded so that replay can prove the log consistent.
    case move(id: ItemID, from: UInt64, to: UInt64)
    /// Gives the live item `id` new text; its place, author, time and seq
    /// stay. `sender` is who edited. `index` is where the item was,
    /// `replaces` the seq of the record that held its text until now (its
    /// insert or its previous edit), `inserted` the seq of its insert:
    /// recorded so that replay finds the item without searching and checks
    /// it, an undo finds the text before in one read, and a list finds the
    /// author and time.
    case edit(id: ItemID, text: String, sender: String?, index: UInt64, replaces: UInt64, inserted: UInt64)
    /// Puts the removed item `id` back at `index` (0…count), with its text
    /// as it was when it was removed: that of the record at `textSeq` (its
    /// insert or its latest edit), recorded as `edit` records `replaces`.
    case restore(id: ItemID, index: UInt64, textSeq: UInt64)
    /// Forgets the item `id` for everyone: a live item leaves the list as by
    /// a remove (`index`: where it was), a removed one stays removed (`index`
    /// nil); its insert's and every edit's text (and sender) are blanked in
    /// place, and it never comes back.
    case erase(id: ItemID, index: UInt64?)
    /// Takes the sender off the edit at seq `edit` of the item `id`, which
    /// stays as it is (`erase --sender` of a sender who edited others'
    /// items): the edit keeps its text and slot, names no sender, and says
    /// this event's seq as `erased`. No list changes.
    case unsign(id: ItemID, edit: UInt64)
  }

  /// An edit whose sender alone was taken off (`Op.unsign`): `erased` is
  /// the unsign's seq and the text is kept (a text is never empty; an
  /// erased one is).
  public var isUnsigned: Bool {
    guard erased != nil, case .edit(_, let text, _, _, _, _) = op else { return false }
    return !text.isEmpty
  }

  /// The item the event is about.
  public var id: ItemID {
    switch op {
    case .insert(let id, _, _, _), .remove(let id, _), .move(let id, _, _), .edit(let id, _, _, _, _, _),
      .restore(let id, _, _), .erase(let id, _), .unsign(let id, _):
      return id
    }
  }

  /// `insert`, `remove`, `move`, `edit`, `restore`, `erase` or `unsign`, as the log and JSON name it.
  public var opName: String {
    switch op {
    case .insert: return "insert"
    case .remove: return "remove"
    case .move: return "move"
    case .edit: return "edit"
    case .restore: return "restore"
    case .erase: return "erase"
    case .unsign: return "unsign"
    }
  }
}
