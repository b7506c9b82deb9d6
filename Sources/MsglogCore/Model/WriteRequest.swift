/// A command, with the stream it is for: what `EventLog.perform` takes.
public struct WriteRequest: Equatable, Sendable {
  /// What a user asks of a stream; the ledger validates it into an event.
  public enum Command: Equatable, Sendable {
    /// Insert at `index`, or at the end when nil (append).
    case insert(InsertRequest)
    case remove(ItemSelector)
    /// Move the item at `from` so that it ends at `to`; when `id` is given the
    /// item at `from` must be that one (import of exported lines checks it).
    case move(from: Int, to: Int, id: ItemID?)
    /// Give a live item new text (`sender`: who edited); the same text again
    /// changes nothing.
    case edit(ItemSelector, text: String, sender: String?)
    /// Bring a removed item back at `index`, or when nil right after its
    /// predecessor (the first item before it, in the list as it was just
    /// before its removal, that is still live).
    case restore(ItemSelector, index: Int?)
    /// Append the event that undoes event `seq` of the stream; when nil, the
    /// stream's latest event that is not an undo, is not undone, and whose
    /// undoing applies and changes something. `sender`: who undid, named
    /// on the edit an undo of an edit appends (the one inverse that names
    /// anyone: a remove, a restore and a move carry no sender).
    case undo(seq: UInt64?, sender: String? = nil)
    /// Forget the item (live or removed) for everyone: its text is blanked
    /// in every event that held it, and it never comes back. Erasing an
    /// erased item changes nothing.
    case erase(ItemSelector)
    /// Take the sender off the edit at seq `edit` of the item (`erase
    /// --sender`, for a sender's edits of others' items): the edit keeps
    /// its text. An edit unsigned or erased already changes nothing.
    case unsign(ItemSelector, edit: UInt64)
  }

  public var stream: StreamName
  public var command: Command
  /// The event time to record; now when nil (import keeps exported times).
  public var time: Timestamp?
  /// The seq of the event this one undoes, as an exported line says
  /// (`import`, a rebuild): checked, not computed. The `undo` command
  /// computes its own.
  public var undoes: UInt64?
  /// The replica change the event is made from, as an exported line says
  /// (`import`, a rebuild, a replica adopting its remote's events); a
  /// remote doing a replica's change sets its own (`LedgerSession+Sync`).
  public var origin: Origin?
  /// An insert or an edit as an erased log holds it (an exported line
  /// with `"erased":S`, a rebuild): empty text, no sender, blanked by the
  /// erase at seq S, which must follow.
  public var erased: UInt64?
  /// The seq an exported line says its event had in its log (`import`);
  /// nil for any other write.
  package var exportedSeq: UInt64?

  public init(
    stream: StreamName, command: Command, time: Timestamp? = nil, undoes: UInt64? = nil, origin: Origin? = nil,
    erased: UInt64? = nil
  ) {
    self.stream = stream
    self.command = command
    self.time = time
    self.undoes = undoes
    self.origin = origin
    self.erased = erased
  }
}
