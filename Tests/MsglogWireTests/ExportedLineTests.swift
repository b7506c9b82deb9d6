import Msglog
import MsglogWire
import Testing

@testable import MsglogCore

/// What `export` writes (`Event.jsonLine`, the wire module's), `import`
/// reads back as the same command (`ImportLine`, the core's).
@Suite struct ExportedLineTests {
  func parse(_ line: String) throws -> WriteRequest {
    try ImportLine.parse(Array(line.utf8), defaultStream: "main")
  }

  @Test func acceptsExportedLinesKeepingTheirTime() throws {
    let event = Event(
      seq: 9, stream: "main", version: 4, time: Timestamp(milliseconds: 1_796_000_000_123),
      op: .move(id: ItemID(), from: 1, to: 0))
    let request = try parse(event.jsonLine)
    #expect(request.time == event.time)
    #expect(request.command == .move(from: 1, to: 0, id: event.id))
  }
}
