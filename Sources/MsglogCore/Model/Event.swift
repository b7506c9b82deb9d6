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

  public init(seq: UInt64, stream: StreamName, version: UInt64, time: Timestamp, op: Op) {
    self.seq = seq
    self.stream = stream
    self.version = version
    self.time = time
    self.op = op
  }

  /// What the event does to the stream's ordered array (the event table of docs/REFERENCE.md, "Concepts").
  public enum Op: Equatable, Sendable {
    /// `array.insert(item, at: index)`.
    case insert(id: ItemID, index: UInt64, text: String, sender: String?)
    /// Removes the item whose id is `id`, wherever it is. `index` is where it
    /// was: recorded so that replay finds it without searching, and checks it.
    case remove(id: ItemID, index: UInt64)
    /// `array.insert(array.remove(at: from), at: to)`; `id` is the moved item,
    /// recorded so that replay can prove the log consistent.
    case move(id: ItemID, from: UInt64, to: UInt64)
  }

  /// The item the event is about.
  public var id: ItemID {
    switch op {
    case .insert(let id, _, _, _), .remove(let id, _), .move(let id, _, _): return id
    }
  }

  /// `insert`, `remove` or `move`, as the log and JSON name it.
  public var opName: String {
    switch op {
    case .insert: return "insert"
    case .remove: return "remove"
    case .move: return "move"
    }
  }
}
