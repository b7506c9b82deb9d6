import Msglog
import MsglogWire

/// The full items of a list of slots, fetched a few at a time into a piece
/// of an answer: one item at first, then as many as the largest text seen
/// so far lets fit in a piece (at most 32 a read), so a list of 1 MiB
/// messages is fetched one by one and a list of short ones in batches.
struct ItemTexts {
  let log: EventLog
  let slots: [Slot]
  /// Each slot's index in the answer; nil: its place in `slots`.
  let indices: [Int]?
  private(set) var next = 0
  private var batch = 1

  init(log: EventLog, slots: [Slot], indices: [Int]? = nil) {
    self.log = log
    self.slots = slots
    self.indices = indices
  }

  var isDone: Bool { next >= slots.count }

  /// Writes the next items into `json` until it holds a piece, or all are written.
  mutating func write(into json: inout JSONWriter, _ each: (inout JSONWriter, Item, Int) -> Void) throws {
    while next < slots.count && json.bytes.count < ResponseStream.capacity {
      let end = min(next + batch, slots.count)
      let items = try log.read { try $0.items(slots[next..<end]) }
      var largest = 1
      for item in items {
        each(&json, item, indices?[next] ?? next)
        next += 1
        largest = max(largest, item.text.utf8.count)
      }
      batch = max(1, min(32, ResponseStream.capacity / largest))
    }
  }
}
