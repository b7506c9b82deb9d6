import Msglog
import MsglogWire

extension Routes {
  func streams() throws -> Response {
    let streams = try log.streams()
    return .json { $0.streams(streams) }
  }

  /// The stream's items now (404 for a stream no event has named), or as
  /// of `at`.
  func items(_ request: Request) throws -> Response {
    let stream = try request.stream()
    let at = try request.number("at")
    if at == nil {
      guard try log.streams().contains(where: { $0.stream == stream }) else {
        throw HTTPError(status: 404, message: "no stream \(TerminalText.quoted(stream))")
      }
    }
    let snapshot = at == nil ? try log.items(of: stream) : try log.replay(stream, at: at)
    var json = JSONWriter()
    json.snapshot(snapshot)
    json.raw("\n")
    return Response(contentType: "application/json", body: .bytes(json.take()))
  }

  func events(_ request: Request) throws -> Response {
    let only = try request.onlyStream()
    let from = try request.number("from") ?? 1
    let limit = try request.number("limit") ?? 1000
    guard limit > 0 && limit <= 100_000 else { throw HTTPError.badRequest("limit must be 1 to 100000") }
    var json = JSONWriter()
    for event in try log.events(from: max(from, 1), limit: Int(limit), stream: only) {
      json.event(event)
      json.raw("\n")
    }
    return Response(contentType: "application/x-ndjson", body: .bytes(json.take()))
  }

  func diff(_ request: Request) throws -> Response {
    let stream = try request.stream()
    guard let a = try request.number("from"), let b = try request.number("to") else {
      throw HTTPError.badRequest("diff needs from and to")
    }
    let diff = try log.diff(stream, from: a, to: b)
    return .json { $0.diff(diff) }
  }

  /// Server-Sent Events from `Last-Event-ID` + 1 (a reconnecting client),
  /// else `from`, else only new events.
  func follow(_ request: Request) throws -> Response {
    let only = try request.onlyStream()
    let head = try log.headSeq()
    let next: UInt64
    if let last = request.header("last-event-id"), !last.isEmpty {
      next = try Request.number(last, what: "Last-Event-ID") + 1
    } else if let from = try request.number("from") {
      next = max(from, 1)
    } else {
      next = head + 1
    }
    if next > head + 1 { throw MsglogError.seqBeyondHead(seq: next - 1, head: head) }
    let feed = EventFeed(log: log, commits: commits, stream: only, next: next)
    return Response(contentType: "text/event-stream", body: .events(feed))
  }
}
