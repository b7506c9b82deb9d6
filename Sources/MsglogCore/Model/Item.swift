/// One element of a stream's ordered array, as `list` and `replay` show it.
public struct Item: Equatable, Sendable {
  /// Its id, given once in the whole log (even after it is removed).
  public var id: ItemID
  /// The message as of the list read: its last edit's text, else its insert's.
  public var text: String
  /// Who wrote it (the insert's sender; an edit does not change it).
  public var sender: String?
  /// Time of the event that inserted it.
  public var time: Timestamp
  /// Seq of the event that inserted it.
  public var seq: UInt64
  /// Time of the edit that gave it its text; nil while it was never edited.
  public var edited: Timestamp?
  /// In a replica's local view: its latest change is a pending change, not
  /// yet done by the remote (and, for a pending insert, `seq` is 0).
  public var pending: Bool
  /// In a past list (`replay(at:)`, a diff): the item was erased since, by
  /// the erase at this seq; its text is empty and it names no sender.
  public var erased: UInt64?

  public init(
    id: ItemID, text: String, sender: String?, time: Timestamp, seq: UInt64, edited: Timestamp? = nil,
    pending: Bool = false
  ) {
    self.id = id
    self.text = text
    self.sender = sender
    self.time = time
    self.seq = seq
    self.edited = edited
    self.pending = pending
    self.erased = nil
  }
}

/// An item is identified by its id, for SwiftUI's `ForEach(items)` and
/// diffable data sources: the id stays with it through moves and edits, and
/// back after a restore.
extension Item: Identifiable {}
