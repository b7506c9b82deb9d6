import MsglogHTTPWire

/// One event of a `text/event-stream` answer (`/api/follow`).
package struct ServerSentEvent: Sendable, Equatable {
  /// The stream's last event id when this event was dispatched (msglog
  /// sends the event's seq).
  package var id: String?
  /// The `event:` field; nil for the default type, `message`.
  package var event: String?
  /// The `data:` lines, joined with line feeds.
  package var data: String

  package init(id: String? = nil, event: String? = nil, data: String) {
    self.id = id
    self.event = event
    self.data = data
  }
}

/// Reads Server-Sent Events line by line as bytes arrive, by the WHATWG
/// rules (lines end in CRLF, LF or CR; `:` begins a comment, which keeps
/// a quiet stream alive; an empty line dispatches the event; an event
/// without data is none), with a bound on a line's length so a server
/// cannot make it buffer without end.
package struct ServerSentEventParser: Sendable {
  package private(set) var lastEventID: String?
  private var line: [UInt8] = []
  private var data: [UInt8] = []
  private var hasData = false
  private var event: String?
  private var afterCR = false
  private var atStart = true
  private let lineLimit: Int

  package init(lineLimit: Int = 1 << 20) { self.lineLimit = lineLimit }

  /// Reads `bytes`, returning the events they complete, in order. Throws
  /// `HTTPSyntaxError` for an event longer than the limit.
  package mutating func feed(_ bytes: some Sequence<UInt8>) throws -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for byte in bytes {
      if afterCR {
        afterCR = false
        if byte == 0x0A { continue }
      }
      switch byte {
      case 0x0D, 0x0A:
        afterCR = byte == 0x0D
        if let event = endLine() { events.append(event) }
      default:
        line.append(byte)
        guard line.count + data.count <= lineLimit else {
          throw HTTPSyntaxError("an event is longer than \(lineLimit) bytes")
        }
      }
    }
    return events
  }

  private mutating func endLine() -> ServerSentEvent? {
    defer { line.removeAll(keepingCapacity: true) }
    if atStart {
      atStart = false
      if line.starts(with: [0xEF, 0xBB, 0xBF]) { line.removeFirst(3) }
    }
    guard !line.isEmpty else { return dispatch() }
    if line.first == UInt8(ascii: ":") { return nil }
    let name: ArraySlice<UInt8>
    var value: ArraySlice<UInt8>
    if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
      name = line[..<colon]
      value = line[(colon + 1)...]
      if value.first == UInt8(ascii: " ") { value.removeFirst() }
    } else {
      name = line[...]
      value = []
    }
    switch String(decoding: name, as: UTF8.self) {
    case "data":
      if hasData { data.append(0x0A) }
      data += value
      hasData = true
    case "event":
      event = String(decoding: value, as: UTF8.self)
    case "id":
      if !value.contains(0) { lastEventID = String(decoding: value, as: UTF8.self) }
    default:
      break  // `retry` and unknown fields: nothing msglog acts on
    }
    return nil
  }

  private mutating func dispatch() -> ServerSentEvent? {
    defer {
      data.removeAll(keepingCapacity: true)
      hasData = false
      event = nil
    }
    guard hasData else { return nil }
    return ServerSentEvent(
      id: lastEventID, event: event.flatMap { $0.isEmpty ? nil : $0 }, data: String(decoding: data, as: UTF8.self))
  }
}

/// The events of a streamed answer, one at a time as they arrive.
package final class ServerSentEventReader {
  package let stream: HTTPResponseStream
  private var parser: ServerSentEventParser
  private var ready: [ServerSentEvent] = []

  package init(_ stream: HTTPResponseStream, lineLimit: Int = 1 << 20) {
    self.stream = stream
    parser = ServerSentEventParser(lineLimit: lineLimit)
  }

  package var lastEventID: String? { parser.lastEventID }

  /// The next event, waiting for it (each wait at most the idle timeout:
  /// a server's keep-alive comments reset it); nil when the server ends
  /// the stream. `HTTPClient.cancel()` ends a wait with `.cancelled`.
  package func next() throws -> ServerSentEvent? {
    while ready.isEmpty {
      guard let piece = try stream.next() else { return nil }
      do {
        ready = try parser.feed(piece)
      } catch let error as HTTPSyntaxError {
        stream.close()
        throw HTTPClientError.malformedAnswer(origin: stream.origin, reason: error.reason)
      }
    }
    return ready.removeFirst()
  }
}
