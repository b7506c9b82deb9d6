/// What a user asks of a stream; the ledger validates it into an event.
public enum Command: Equatable, Sendable {
  /// Insert at `index`, or at the end when nil (append).
  case insert(InsertRequest)
  case remove(ItemSelector)
  /// Move the item at `from` so that it ends at `to`; when `id` is given the
  /// item at `from` must be that one (import of exported lines checks it).
  case move(from: UInt64, to: UInt64, id: ItemID?)
}

public struct InsertRequest: Equatable, Sendable {
  public var index: UInt64?
  public var text: String
  public var sender: String?
  /// The id to use; a fresh random one when nil.
  public var id: ItemID?

  public init(index: UInt64? = nil, text: String, sender: String? = nil, id: ItemID? = nil) {
    self.index = index
    self.text = text
    self.sender = sender
    self.id = id
  }
}

/// How `remove` names its item.
public enum ItemSelector: Equatable, Sendable {
  case id(ItemID)
  /// At least 8 characters of the lowercase text form.
  case prefix(String)

  /// Parses a full UUID in any case or a prefix of 8+ characters of its text form.
  public init(parsing text: String) throws(MsglogError) {
    if let id = ItemID(canonical: text) {
      self = .id(id)
      return
    }
    let lower = text.lowercased()
    let valid = lower.utf8.allSatisfy { $0.isHexDigit || $0 == UInt8(ascii: "-") }
    guard valid, lower.utf8.count <= 36 else { throw .invalidInput(.malformedSelector(text)) }
    guard lower.utf8.count >= 8 else { throw .invalidInput(.prefixTooShort(text)) }
    self = .prefix(lower)
  }
}

/// A command, with the stream it is for.
public struct WriteRequest: Equatable, Sendable {
  public var stream: StreamName
  public var command: Command
  /// The event time to record; now when nil (import keeps exported times).
  public var time: Timestamp?

  public init(stream: StreamName, command: Command, time: Timestamp? = nil) {
    self.stream = stream
    self.command = command
    self.time = time
  }
}

/// What an accepted command appended.
public struct Outcome: Equatable, Sendable {
  public var event: Event
  /// insert: where the item went; remove: where it was; move: its final index.
  public var index: UInt64

  public init(event: Event, index: UInt64) {
    self.event = event
    self.index = index
  }
}
