import Foundation
import Msglog

/// What the bulk-import tests of each store feed both ways (`BulkImport`
/// against the ledger): one workload, and the imports the bulk path must
/// leave to the ledger.
public enum BulkImportCatalogue {
  /// Random inserts (at random places, with ids, times, senders, escapes),
  /// removes by id and moves (some onto themselves) over `streams`, with
  /// lists long enough for order trees of several levels. Every request
  /// carries its time, so that two logs get identical events.
  public static func workload(count: Int, streams: [StreamName], seed: UInt64, idBase: Int = 0) -> [WriteRequest] {
    var random = SeededGenerator(seed: seed)
    var lists: [StreamName: [ItemID]] = [:]
    var requests: [WriteRequest] = []
    for i in 0..<count {
      let stream = streams.randomElement(using: &random)!
      let list = lists[stream, default: []]
      let time = Timestamp(milliseconds: 1_600_000_000_000 + Int64(i) * 7)
      let roll = Int.random(in: 0..<10, using: &random)
      if roll < 2, !list.isEmpty {
        let at = Int.random(in: 0..<list.count, using: &random)
        requests.append(WriteRequest(stream: stream, command: .remove(.id(list[at])), time: time))
        lists[stream]!.remove(at: at)
      } else if roll < 4, !list.isEmpty {
        let from = Int.random(in: 0..<list.count, using: &random)
        let to = roll == 3 ? from : Int.random(in: 0..<list.count, using: &random)
        requests.append(WriteRequest(stream: stream, command: .move(from: from, to: to, id: list[from]), time: time))
        let moved = lists[stream]!.remove(at: from)
        lists[stream]!.insert(moved, at: to)
      } else {
        let id = ItemID(canonical: String(format: "%08x-0000-4000-8000-%012x", seed & 0xFFFF_FFFF, idBase + i))!
        let at = Int.random(in: 0...list.count, using: &random)
        let insert = InsertRequest(
          index: roll == 9 ? nil : at, text: "m\(i) ✓ \"q\"\n", sender: i % 3 == 0 ? "ann" : nil, id: id)
        requests.append(WriteRequest(stream: stream, command: .insert(insert), time: time))
        lists[stream, default: []].insert(id, at: roll == 9 ? list.count : at)
      }
    }
    return requests
  }

  /// Imports the bulk path does not build, in a log whose stream `doc`
  /// holds the item `used` (and no item has ever had `fresh`): the ledger
  /// writes or refuses them as always.
  public static func unfit(used: ItemID, fresh: ItemID) -> [(String, [WriteRequest])] {
    [
      ("a stream with events", [WriteRequest(stream: "doc", command: .insert(InsertRequest(text: "x")))]),
      (
        "an id the log knows",
        [WriteRequest(stream: "new", command: .insert(InsertRequest(text: "x", id: used)))]
      ),
      (
        "an id used twice",
        [
          WriteRequest(stream: "new", command: .insert(InsertRequest(text: "x", id: fresh))),
          WriteRequest(stream: "new", command: .insert(InsertRequest(text: "y", id: fresh))),
        ]
      ),
      ("an index out of range", [WriteRequest(stream: "new", command: .insert(InsertRequest(index: 1, text: "x")))]),
      ("a remove of an item elsewhere", [WriteRequest(stream: "new", command: .remove(.id(used)))]),
      ("a remove by prefix", [WriteRequest(stream: "new", command: .remove(.prefix("00000000")))]),
      ("a move in an empty stream", [WriteRequest(stream: "new", command: .move(from: 0, to: 0, id: nil))]),
      ("an undo", [WriteRequest(stream: "new", command: .undo(seq: nil))]),
      (
        "an edit",
        [
          WriteRequest(stream: "new", command: .insert(InsertRequest(text: "x", id: fresh))),
          WriteRequest(stream: "new", command: .edit(.id(fresh), text: "y", sender: nil)),
        ]
      ),
      (
        "an exported undo",
        [WriteRequest(stream: "new", command: .insert(InsertRequest(text: "x", id: fresh)), undoes: 1)]
      ),
      ("an empty text", [WriteRequest(stream: "new", command: .insert(InsertRequest(text: "")))]),
    ]
  }
}
