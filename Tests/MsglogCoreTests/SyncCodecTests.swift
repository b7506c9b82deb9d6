import MsglogCore
import Testing

/// The forms sync's data takes: a change as JSON, the overlay a local
/// view is built in. (Records in frames: MsglogSyncProtocolTests.)
@Suite struct SyncCodecTests {
  static let a = ItemID(canonical: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")!
  static let b = ItemID(canonical: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb")!

  static let changes: [ReplicaChange] = [
    .init(number: 1, made: .init(milliseconds: 1_000), basis: 0, stream: "main",
          intent: .append(id: a, text: "hi \"there\"\n", sender: "ann", seen: 0)),
    .init(number: 2, made: .init(milliseconds: 2_000), basis: 7, stream: "board",
          intent: .insert(id: b, text: "card", sender: nil, after: [a], seen: 1)),
    .init(number: 3, made: .init(milliseconds: 3_000), basis: 7, stream: "board",
          intent: .move(id: b, after: [], from: 1, to: 0)),
    .init(number: 4, made: .init(milliseconds: 4_000), basis: 8, stream: "board", intent: .remove(id: a)),
    .init(number: 5, made: .init(milliseconds: 5_000), basis: 8, stream: "board",
          intent: .edit(id: b, text: "new", sender: "bob")),
    .init(number: 6, made: .init(milliseconds: 6_000), basis: 8, stream: "board",
          intent: .restore(id: a, after: nil, seen: 1)),
    .init(number: 7, made: .init(milliseconds: 7_000), basis: 8, stream: "board",
          intent: .restore(id: a, after: [b], seen: 1)),
    .init(number: 8, made: .init(milliseconds: 8_000), basis: 9, stream: "board", intent: .undo(.event(seq: 3), sender: nil)),
    .init(number: 9, made: .init(milliseconds: 9_000), basis: 9, stream: "board", intent: .undo(.change(7), sender: "ann")),
  ]

  @Test(arguments: changes) func aChangeRoundTripsThroughItsJSON(change: ReplicaChange) throws {
    let decoded = try ReplicaChange(json: try JSONParser.parse(change.json))
    #expect(decoded == change)
  }

  @Test(arguments: [
    (#"{"change":0,"made":"2026-01-01T00:00:00.000Z","basis":0,"op":"remove","stream":"main","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"}"#, "\"change\" must be a whole number from 1 to 2^63-1"),
    (#"{"change":1,"made":"yesterday","basis":0,"op":"remove","stream":"main","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"}"#, "\"made\" must be an RFC 3339 time"),
    (#"{"change":1,"made":"2026-01-01T00:00:00.000Z","basis":0,"op":"remove","stream":"main"}"#, "\"id\" is missing"),
    (#"{"change":1,"made":"2026-01-01T00:00:00.000Z","basis":0,"op":"fly","stream":"main","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"}"#, "unknown op 'fly' in a change"),
    (#"{"change":1,"made":"2026-01-01T00:00:00.000Z","basis":0,"op":"remove","stream":"main","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa","extra":1}"#, "unknown member \"extra\" in a change"),
    (#"{"change":1,"made":"2026-01-01T00:00:00.000Z","basis":0,"op":"move","stream":"main","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa","from":0,"to":1,"after":["x"]}"#, "\"after\" must be an array of UUIDs"),
  ])
  func aMalformedChangeIsRefusedNamingWhy(json: String, message: String) throws {
    #expect(throws: MsglogError.invalidInput(.change(message))) {
      try ReplicaChange(json: try JSONParser.parse(json))
    }
  }

  /// An overlay reads as its store with its own writes on top, the id
  /// index merged in storage order, and writes nothing beneath.
  @Test func anOverlayReadsItsWritesOverItsStore() throws {
    let store = MemoryStore()
    let ids = (0..<20).map { _ in ItemID.random() }
    try store.write { writer in
      let session = try LedgerSession(writer: writer, now: .init(milliseconds: 0))
      for (i, id) in ids.prefix(10).enumerated() {
        _ = try session.perform(.init(stream: "main", command: .insert(.init(text: "\(i)", id: id))))
      }
      try session.finish()
    }
    try store.read { reader in
      let overlay = try OverlayWriter(over: reader)
      let session = try LedgerSession(writer: overlay, now: .init(milliseconds: 0), checkpointInterval: .max)
      for (i, id) in ids.suffix(10).enumerated() {
        _ = try session.perform(.init(stream: "main", command: .insert(.init(index: 0, text: "new \(i)", id: id))))
      }
      _ = try session.perform(.init(stream: "main", command: .remove(.id(ids[0]))))
      try session.finish()
      #expect(try overlay.headSeq() == 21)
      #expect(try reader.headSeq() == 10)
      var merged: [ItemID] = []
      try overlay.forEachIdEntry(from: []) { id, _ in
        merged.append(id)
        return true
      }
      #expect(merged == ids.sorted(by: ItemID.precedesInStorageOrder))
      #expect(try overlay.idEntry(ids[0])?.removeSeq == 21)
      #expect(try reader.idEntry(ids[0])?.removeSeq == 0)
      #expect(try CurrentView.stream("main", in: overlay).items.count == 19)
      #expect(try CurrentView.stream("main", in: reader).items.count == 10)
      #expect(try Replay.stream("main", at: nil, in: overlay).items == CurrentView.stream("main", in: overlay).items)
    }
  }
}

/// The bound a pull's page holds its records to (`PulledPage`, in MsglogSyncProtocol).
@Suite struct RecordBoundTests {
  /// The longest record the limits allow is exactly `EventRecord.maxSize`:
  /// framed (record format 4), its whole form (formats 1 to 3) shorter.
  @Test func theLongestRecordIsTheBound() {
    let longest = Event(
      seq: 1, stream: StreamName(String(repeating: "s", count: Limits.maxStreamNameBytes)), version: 1,
      time: .init(milliseconds: 0),
      op: .edit(
        id: .random(), text: String(repeating: "t", count: Limits.maxTextBytes),
        sender: String(repeating: "n", count: Limits.maxSenderBytes), index: 0, replaces: 1, inserted: 1),
      undoes: 2, origin: Origin(replica: .random(), change: 1, made: .init(milliseconds: 0)))
    #expect(EventRecord.encode(longest, layout: .framed).count == EventRecord.maxSize)
    #expect(EventRecord.encode(longest, layout: .whole).count < EventRecord.maxSize)
  }
}
