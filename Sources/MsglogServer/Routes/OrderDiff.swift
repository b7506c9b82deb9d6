import Msglog
import MsglogWire

/// `diff A B` computed on the two lists' orders — ids and the seqs of their
/// texts, not the texts — so that a diff of big messages holds a few dozen
/// bytes an item; the texts of what it inserts and reloads are fetched as
/// the answer is written (`DiffWriter`).
///
/// The moves and indices are `StreamDiff`'s own, run on stand-in items whose
/// text is the seq of their text record: an item whose record differs at
/// the two seqs (an edit between them) is a reload candidate, kept only if
/// its texts really differ (one edited back to its old text is not).
struct OrderDiff {
  var stream: StreamName
  var from: UInt64
  var to: UInt64
  /// Index at A and id, by descending index.
  var removed: [(index: Int, id: ItemID)]
  /// Index at B and slot, by ascending index.
  var inserted: [(index: Int, slot: Slot)]
  var moved: [StreamDiff.Move]
  /// Index at B, and the item's slot at B and at A.
  var reloads: [(index: Int, new: Slot, old: Slot)]

  init(_ stream: StreamName, from a: UInt64, to b: UInt64, in snapshot: borrowing LogSnapshot) throws {
    let old = try snapshot.order(of: stream, at: a)
    let new = try snapshot.order(of: stream, at: b)
    let diff = StreamDiff(from: Self.standIn(old), to: Self.standIn(new))
    self.stream = diff.stream
    from = diff.from
    to = diff.to
    removed = diff.removed.map { ($0.index, $0.item.id) }
    inserted = diff.inserted.map { ($0.index, Slot(id: $0.item.id, seq: $0.item.seq)) }
    moved = diff.moved
    let candidates = Set(diff.edited.map(\.item.id))
    var before: [ItemID: Slot] = [:]
    for slot in old.slots where candidates.contains(slot.id) { before[slot.id] = slot }
    reloads = diff.edited.map { ($0.index, Slot(id: $0.item.id, seq: $0.item.seq), before[$0.item.id]!) }
  }

  private static func standIn(_ order: StreamOrder) -> StreamContents {
    var contents = order.header
    contents.items = order.slots.map { slot in
      Item(id: slot.id, text: String(slot.seq), sender: nil, time: Timestamp(milliseconds: 0), seq: slot.seq)
    }
    return contents
  }
}

/// Writes an `OrderDiff` as `diff --json` does, a piece at a time.
struct DiffWriter {
  private enum Part { case head, removed, inserted, moved, edited, done }

  private let diff: OrderDiff
  private let log: EventLog
  private var part = Part.head
  private var position = 0
  private var inserted: ItemTexts

  init(_ diff: OrderDiff, log: EventLog) {
    self.diff = diff
    self.log = log
    inserted = ItemTexts(log: log, slots: diff.inserted.map(\.slot), indices: diff.inserted.map(\.index))
  }

  /// The next piece; false once the document is complete.
  mutating func write(into json: inout JSONWriter) throws -> Bool {
    while json.bytes.count < ResponseStream.capacity {
      switch part {
      case .head:
        json.beginObject()
        json.member("stream", diff.stream)
        json.member("from", diff.from)
        json.member("to", diff.to)
        json.key("removed")
        json.beginArray()
        part = .removed
      case .removed:
        guard position < diff.removed.count else {
          json.endArray()
          json.key("inserted")
          json.beginArray()
          (part, position) = (.inserted, 0)
          continue
        }
        json.beginObject()
        json.member("index", diff.removed[position].index)
        json.member("id", diff.removed[position].id)
        json.endObject()
        position += 1
      case .inserted:
        guard !inserted.isDone else {
          json.endArray()
          json.key("moved")
          json.beginArray()
          (part, position) = (.moved, 0)
          continue
        }
        try inserted.write(into: &json) { json, item, index in json.item(item, index: index) }
      case .moved:
        guard position < diff.moved.count else {
          json.endArray()
          json.key("edited")
          json.beginArray()
          (part, position) = (.edited, 0)
          continue
        }
        let move = diff.moved[position]
        json.beginObject()
        json.member("from", move.from)
        json.member("to", move.to)
        json.member("id", move.id)
        json.endObject()
        position += 1
      case .edited:
        guard position < diff.reloads.count else {
          json.endArray()
          json.endObject()
          part = .done
          continue
        }
        let reload = diff.reloads[position]
        let items = try log.read { try $0.items([reload.new, reload.old][...]) }
        if items[0].text != items[1].text {
          json.beginObject()
          json.member("index", reload.index)
          json.member("id", reload.new.id)
          json.member("text", items[0].text)
          json.endObject()
        }
        position += 1
      case .done:
        return false
      }
    }
    return part != .done
  }
}
