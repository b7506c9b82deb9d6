/// What a projection keeps per position: anything that knows its item id.
///
/// Replay folds events into `Projection<Item>` (the full bodies); the write
/// path only needs the order, so it folds into `Projection<ItemID>`.
public protocol ProjectionElement: Equatable {
  var id: ItemID { get }
  /// The element an insert event creates.
  init(inserted event: Event, id: ItemID, text: String, sender: String?)
}

extension Item: ProjectionElement {
  public init(inserted event: Event, id: ItemID, text: String, sender: String?) {
    self.init(id: id, text: text, sender: sender, time: event.time, seq: event.seq)
  }
}

extension ItemID: ProjectionElement {
  public var id: ItemID { self }
  public init(inserted event: Event, id: ItemID, text: String, sender: String?) { self = id }
}

/// A stream's ordered array, built by folding its events in seq order.
///
/// `apply` implements SPEC.md's event table and checks every event against the
/// current state, so a log that was written by anything other than a correct
/// msglog is caught at the first event that does not fit.
public struct Projection<Element: ProjectionElement> {
  public private(set) var elements: [Element] = []
  /// The stream's version: how many of its events have been folded in.
  public private(set) var version: UInt64 = 0

  public init() {}

  public var count: Int { elements.count }

  /// Folds one event of this stream into the array.
  public mutating func apply(_ event: Event) throws(ReplayError) {
    guard event.version == version + 1 else {
      throw ReplayError(seq: event.seq, reason: "stream version \(event.version) follows \(version)")
    }
    switch event.op {
    case .insert(let id, let index, let text, let sender):
      guard index <= UInt64(elements.count) else {
        throw ReplayError(
          seq: event.seq, reason: "insert at index \(index) of a stream with \(elements.count) items")
      }
      elements.insert(Element(inserted: event, id: id, text: text, sender: sender), at: Int(index))
    case .remove(let id, let index):
      guard index < UInt64(elements.count), elements[Int(index)].id == id else {
        let found = index < UInt64(elements.count) ? elements[Int(index)].id.text : "nothing"
        throw ReplayError(
          seq: event.seq, reason: "remove records \(id.text) at index \(index), but \(found) is there")
      }
      elements.remove(at: Int(index))
    case .move(let id, let from, let to):
      let count = UInt64(elements.count)
      guard from < count, to < count else {
        throw ReplayError(
          seq: event.seq, reason: "move \(from) -> \(to) in a stream with \(elements.count) items")
      }
      guard elements[Int(from)].id == id else {
        throw ReplayError(
          seq: event.seq,
          reason: "move records \(id.text) at index \(from), but \(elements[Int(from)].id.text) is there")
      }
      let element = elements.remove(at: Int(from))
      elements.insert(element, at: Int(to))
    }
    version = event.version
  }
}

/// An event that does not fit the state replay has reached: the log is corrupted.
public struct ReplayError: Error, Equatable, CustomStringConvertible, Sendable {
  public var seq: UInt64
  public var reason: String

  public init(seq: UInt64, reason: String) {
    self.seq = seq
    self.reason = reason
  }

  public var description: String { "corrupted log at seq \(seq): \(reason)" }
}
