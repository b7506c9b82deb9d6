import Msglog
import MsglogWire

extension Routes {
  func streams() throws -> Response {
    let streams = try log.streams()
    return .json { $0.streams(streams) }
  }

  /// The stream's items now (404 for a stream no event has named), or as
  /// of `at`: streamed from one read of the log as the client takes them,
  /// so a connection holds at most the stream's buffer, whatever the list.
  func items(_ request: Request) throws -> Response {
    let stream = try request.stream()
    let at = try request.number("at")
    let log = self.log
    let body = try ResponseStream.start(stallLimit: stallLimit) { out in
      var json = JSONWriter()
      func send(_ item: Item, _ index: Int) throws {
        json.item(item, index: index)
        if json.bytes.count >= ResponseStream.capacity { try out.write(&json) }
      }
      if let at {
        // A past list is rebuilt whole by replay; its items go out one by one.
        let snapshot = try replays.run { try log.replay(stream, at: at) }
        json.snapshotHead(snapshot, count: snapshot.items.count)
        for (index, item) in snapshot.items.enumerated() { try send(item, index) }
      } else {
        try log.read { snapshot in
          try snapshot.forEachItem(
            of: stream,
            header: { header, count in
              guard header.version > 0 else {
                throw HTTPError(status: 404, message: "no stream \(TerminalText.quoted(stream))")
              }
              json.snapshotHead(header, count: count)
            }, { index, item in try send(item, index) })
        }
      }
      json.snapshotTail()
      json.raw("\n")
      try out.write(&json)
    }
    return Response(contentType: "application/json", body: .stream(body))
  }

  /// `log --json` lines, streamed. The events up to the head as it was when
  /// the request came are read in short reads of the log, one after another,
  /// never holding one open while the client is slow to take its bytes:
  /// events never change, so this is what one long read would give.
  func events(_ request: Request) throws -> Response {
    let only = try request.onlyStream()
    let from = max(try request.number("from") ?? 1, 1)
    let limit = try request.number("limit") ?? 1000
    guard limit > 0 && limit <= 100_000 else { throw HTTPError.badRequest("limit must be 1 to 100000") }
    let log = self.log
    let body = try ResponseStream.start(stallLimit: stallLimit) { out in
      let head = try log.headSeq()
      var next = from
      var sent: UInt64 = 0
      var json = JSONWriter()
      while next <= head && sent < limit {
        try log.read { snapshot in
          try snapshot.forEachEvent(from: next) { event in
            guard event.seq <= head else { return false }
            next = event.seq + 1
            if only == nil || event.stream == only {
              json.event(event)
              json.raw("\n")
              sent += 1
            }
            return sent < limit && json.bytes.count < ResponseStream.capacity
          }
        }
        try out.write(&json)
      }
    }
    return Response(contentType: "application/x-ndjson", body: .stream(body))
  }

  func diff(_ request: Request) throws -> Response {
    let stream = try request.stream()
    guard let a = try request.number("from"), let b = try request.number("to") else {
      throw HTTPError.badRequest("diff needs from and to")
    }
    let diff = try replays.run { try log.diff(stream, from: a, to: b) }
    return .json { $0.diff(diff) }
  }

  /// Server-Sent Events from `Last-Event-ID` + 1 (a reconnecting client),
  /// else `from`, else only new events. A stream with no events yet is
  /// followed from the head, whatever the client asks: there is nothing of
  /// it before, and reading the whole log to find that out is what a page
  /// opened on a new stream must not cost.
  func follow(_ request: Request) throws -> Response {
    let only = try request.onlyStream()
    let (head, exists) = try log.read { snapshot in
      (
        try snapshot.headSeq(),
        try only.map { stream in try snapshot.streams().contains { $0.stream == stream } } ?? true
      )
    }
    var next: UInt64
    if let last = request.header("last-event-id"), !last.isEmpty {
      next = try Request.number(last, what: "Last-Event-ID") + 1
    } else if let from = try request.number("from") {
      next = max(from, 1)
    } else {
      next = head + 1
    }
    if !exists { next = head + 1 }
    if next > head + 1 { throw MsglogError.seqBeyondHead(seq: next - 1, head: head) }
    let feed = EventFeed(log: log, commits: commits, stream: only, next: next)
    return Response(contentType: "text/event-stream", body: .events(feed))
  }
}
