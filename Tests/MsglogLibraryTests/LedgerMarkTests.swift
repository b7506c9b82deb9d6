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

  /// The commands of working together (edit, restore, undo, a rebased
  /// move) accepted between refused ones, each refusal taken back after a
  /// mark: every refusal reaches the writer with nothing (the mark can be
  /// returned to), and the log is the one the accepted commands alone make
  /// — a refused undo leaves nothing undone, a refused edit no text.
  @Test func refusedEditsRestoresAndUndoesAreTakenBack() throws {
    let a = ItemID(canonical: "00000000-0000-4000-8000-00000000000a")!
    let b = ItemID(canonical: "00000000-0000-4000-8000-00000000000b")!
    let c = ItemID(canonical: "00000000-0000-4000-8000-00000000000c")!
    func request(_ command: WriteRequest.Command) -> WriteRequest { WriteRequest(stream: "main", command: command) }
    // (accepted, refused after it, with what the refusal is)
    let steps: [(WriteRequest, WriteRequest?, MsglogError.Category?)] = [
      (request(.insert(InsertRequest(text: "a", id: a))), request(.undo(seq: 9)), .notFound),
      (request(.insert(InsertRequest(text: "b", id: b))), request(.restore(.id(b), index: nil)), .refused),
      (
        request(.insert(InsertRequest(text: "c", id: c))), request(.edit(.id(ItemID.random()), text: "x", sender: nil)),
        .notFound
      ),
      (request(.edit(.id(a), text: "a2", sender: "ann")), request(.edit(.id(a), text: "", sender: nil)), .invalidInput),
      (request(.remove(.id(b))), request(.edit(.id(b), text: "b2", sender: nil)), .refused),
      (request(.restore(.id(b), index: nil)), request(.restore(.id(c), index: 0)), .refused),
      (request(.undo(seq: 4)), request(.undo(seq: 4)), .refused),
      (request(.undo(seq: nil)), nil, nil),
      (request(.move(from: 0, to: 1, id: nil)), request(.move(from: 0, to: 7, id: nil)), .refused),
    ]
    let log = EventLog.inMemory()
    let logAlone = EventLog.inMemory()
    var refused = 0
    try log.memoryStore.write { writer in
      let session = try LedgerSession(writer: writer, now: Timestamp(milliseconds: 5))
      for (accepted, refusal, category) in steps {
        _ = try session.perform(accepted)
        guard let refusal, let category else { continue }
        let mark = session.mark()
        do {
          _ = try session.perform(refusal)
          Issue.record("\(refusal.command) was accepted")
        } catch let error as MsglogError {
          #expect(error.category == category, "\(error)")
          refused += 1
        }
        #expect(session.rewind(to: mark), "refusing \(refusal.command) wrote something")
      }
      // Rebased from version 2 (a, b): the move of the item then at 0 (a)
      // to after b, now that the stream has moved on.
      _ = try session.perform(request(.move(from: 0, to: 1, id: nil)), rebasingFrom: 2)
      try session.finish()
    }
    try logAlone.memoryStore.write { writer in
      let session = try LedgerSession(writer: writer, now: Timestamp(milliseconds: 5))
      for (accepted, _, _) in steps { _ = try session.perform(accepted) }
      _ = try session.perform(request(.move(from: 0, to: 1, id: nil)), rebasingFrom: 2)
      try session.finish()
    }
    #expect(refused == 8)
    #expect(try log.exportLines() == logAlone.exportLines())
    #expect(try log.items().items.map(\.text) == logAlone.items().items.map(\.text))
    #expect(try log.verify().problems.isEmpty)
  }
}
