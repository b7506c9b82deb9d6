import MsglogCore
import MsglogSyncProtocol
import Testing

/// A pull's answer: records in frames, read however the answer is cut,
/// each frame refused by its length before its bytes are read.
@Suite struct RecordFramesTests {
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
          Array(bytes[start..<min(start + step, bytes.count)]), admit: { lengths.append($0) }, take: { read.append($0) }
        )
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
}
