import MsglogCore
import Testing

/// The forms sync's data takes: a change as JSON, records in frames, the
/// overlay a local view is built in.
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
    .init(number: 8, made: .init(milliseconds: 8_000), basis: 9, stream: "board", intent: .undo(.event(seq: 3))),
    .init(number: 9, made: .init(milliseconds: 9_000), basis: 9, stream: "board", intent: .undo(.change(7))),
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

  @Test func framesAreReadHoweverTheAnswerIsCut() throws {
    let records: [[UInt8]] = [[1, 2, 3], [], Array(repeating: 7, count: 70_000), [9]]
    var bytes: [UInt8] = []
    for record in records { record.withUnsafeBytes { RecordFrames.append($0, to: &bytes) } }
    for step in [1, 3, 4096, bytes.count] {
      var reader = RecordFrames.Reader()
      var read: [[UInt8]] = []
      var lengths: [Int] = []
      var start = 0
      while start < bytes.count {
        try reader.feed(
          Array(bytes[start..<min(start + step, bytes.count)]), admit: { lengths.append($0) }, take: { read.append($0) })
        start += step
      }
      #expect(read == records)
      #expect(lengths == records.map(\.count))
      #expect(reader.isAtEnd)
    }
    var cut = RecordFrames.Reader()
    try cut.feed(Array(bytes.dropLast()), admit: { _ in }, take: { _ in })
    #expect(!cut.isAtEnd)
  }

  /// A frame is refused on its length alone, before its bytes arrive.
  @Test func aFrameIsAdmittedBeforeItsBytesAreRead() throws {
    var reader = RecordFrames.Reader()
    var taken = 0
    #expect(throws: RemoteFault.recordTooLarge(bytes: 0xFFFF_FFFF)) {
      try reader.feed(
        [0xFF, 0xFF, 0xFF, 0xFF, 1, 2],
        admit: { length throws(RemoteFault) in
          try PulledPage(after: 0, limit: 10, pageBytes: 100).admit(length: length)
        }, take: { _ in taken += 1 })
    }
    #expect(taken == 0)
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

/// A pull's page taken record by record (`PulledPage`): each refused as
/// soon as it breaks a rule of the protocol, naming the seq.
@Suite struct PulledPageTests {
  static func record(_ seq: UInt64, text: String = "x") -> [UInt8] {
    EventRecord.encode(
      Event(
        seq: seq, stream: "main", version: seq, time: .init(milliseconds: 0),
        op: .insert(id: .random(), index: seq - 1, text: text, sender: nil)))
  }

  @Test func aPageWithinItsBoundsIsTaken() throws {
    var page = PulledPage(after: 4, limit: 3, pageBytes: 1000)
    for seq: UInt64 in 5...7 { try page.take(Self.record(seq)) }
    #expect(page.events.map(\.seq) == [5, 6, 7] && page.lastSeq == 7 && !page.hasRoom)
    try page.check(head: 9)
    #expect(throws: RemoteFault.headBehindRecords(claimed: 6, seq: 7)) { try page.check(head: 6) }
  }

  @Test func eachRuleIsKeptAsRecordsArrive() throws {
    var page = PulledPage(after: 4, limit: 2, pageBytes: 1000)
    #expect(throws: RemoteFault.seqOutOfOrder(expected: 5, found: 6)) { try page.take(Self.record(6)) }
    try page.take(Self.record(5))
    #expect(throws: RemoteFault.seqOutOfOrder(expected: 6, found: 5)) { try page.take(Self.record(5)) }
    var damaged = Self.record(6)
    damaged[damaged.count - 5] ^= 1
    #expect(throws: RemoteFault.self) { try page.take(damaged) }
    try page.take(Self.record(6))
    #expect(throws: RemoteFault.pageTooLong(records: 2)) { try page.admit(length: 10) }
    // A record starts only while the page holds less than its bytes; the first always may.
    let big = Self.record(1, text: String(repeating: "a", count: 2000))
    var bytes = PulledPage(after: 0, limit: 10, pageBytes: 1000)
    try bytes.take(big)
    #expect(throws: RemoteFault.pageTooLarge(bytes: big.count)) { try bytes.admit(length: 10) }
    #expect(throws: RemoteFault.recordTooLarge(bytes: EventRecord.maxSize + 1)) {
      try PulledPage(after: 0, limit: 10, pageBytes: 1000).admit(length: EventRecord.maxSize + 1)
    }
  }

  /// The longest record the limits allow is exactly `EventRecord.maxSize`.
  @Test func theLongestRecordIsTheBound() {
    let longest = Event(
      seq: 1, stream: StreamName(String(repeating: "s", count: Limits.maxStreamNameBytes)), version: 1,
      time: .init(milliseconds: 0),
      op: .edit(
        id: .random(), text: String(repeating: "t", count: Limits.maxTextBytes),
        sender: String(repeating: "n", count: Limits.maxSenderBytes), index: 0, replaces: 1, inserted: 1),
      undoes: 2, origin: Origin(replica: .random(), change: 1, made: .init(milliseconds: 0)))
    #expect(EventRecord.encode(longest).count == EventRecord.maxSize)
  }
}
