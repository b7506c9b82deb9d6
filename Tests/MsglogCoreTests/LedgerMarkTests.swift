import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore

/// A session's marks, which group commit uses to take back one refused
/// command of a batch while the others go on.
@Suite struct LedgerMarkTests {
  /// Commands around refused ones, in one session: each refusal is taken
  /// back, the rest commit with gapless seqs, and the result is the log
  /// the accepted commands alone would make.
  @Test func aRefusedCommandIsTakenBackAndTheOthersGoOn() throws {
    let log = EventLog.inMemory()
    let store = log.memoryStore
    let logAlone = EventLog.inMemory()
    let alone = logAlone.memoryStore
    let refusals: [WriteRequest] = [
      WriteRequest(stream: "main", command: .insert(InsertRequest(index: 99, text: "past the end"))),
      WriteRequest(stream: "main", command: .remove(.id(ItemID.random()))),
      WriteRequest(stream: "new", command: .move(from: 0, to: 1, id: nil)),
      WriteRequest(stream: "main", command: .insert(InsertRequest(text: "", id: nil))),
    ]
    let accepted = workload(count: 40)
    try store.write { writer in
      let session = try LedgerSession(writer: writer, now: Timestamp(milliseconds: 5))
      for (n, request) in accepted.enumerated() {
        if n % 10 == 3 {
          let mark = session.mark()
          #expect(throws: MsglogError.self) { try session.perform(refusals[n / 10]) }
          #expect(session.rewind(to: mark), "a refusal wrote something")
        }
        _ = try session.perform(request)
      }
      try session.finish()
    }
    try alone.write { writer in
      let session = try LedgerSession(writer: writer, now: Timestamp(milliseconds: 5))
      for request in accepted { _ = try session.perform(request) }
      try session.finish()
    }
    let events = try store.read { reader in
      var events: [Event] = []
      try reader.forEachEvent(from: 1) {
        events.append($0)
        return true
      }
      return events
    }
    #expect(events.count > 30 && events.map(\.seq) == Array(1...UInt64(events.count)))
    #expect(try log.exportLines() == logAlone.exportLines())
    #expect(try log.verify().problems.isEmpty)
  }

  /// A mark cannot be returned to once a command after it has written:
  /// the transaction would hold that command's event.
  @Test func aMarkBeforeAWriteCannotBeReturnedTo() throws {
    let store = MemoryStore()
    try store.write { writer in
      let session = try LedgerSession(writer: writer, now: Timestamp(milliseconds: 5))
      let mark = session.mark()
      _ = try session.perform(WriteRequest(stream: "main", command: .insert(InsertRequest(text: "written"))))
      #expect(!session.rewind(to: mark))
      try session.finish()
    }
  }
}
