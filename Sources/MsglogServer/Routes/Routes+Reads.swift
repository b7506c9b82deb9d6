import Msglog
import MsglogWire

extension Routes {
  /// Every stream, or those a named token may read; the sync bookkeeping
  /// (how many replicas, their outcomes) only to a caller that may read
  /// every stream, as a sync pull does: it is the whole log's, not a stream's.
  func streams(_ request: Request) throws -> Response {
    let streams = try log.streams().filter { request.caller.may(.read, $0.stream) }
    let sync = request.caller.readsEverything ? try log.syncBookkeeping() : nil
    return .json { $0.streams(streams, sync: sync) }
  }

  /// The stream's items now (404 for a stream no event has named), or as
  /// of `at`. The list is read in one snapshot as its order (ids and the
  /// seqs of their texts, a few dozen bytes an item: `StreamOrder`); the
  /// texts are fetched a few items at a time as the client takes them,
  /// from records that never change — what one long read would give,
  /// without holding the whole list's texts, or a read, per connection.
  func items(_ request: Request) throws -> Response {
    let stream = try request.stream()
    let at = try request.number("at")
    let log = self.log
    let order: StreamOrder =
      try at == nil
      ? log.read { try $0.order(of: stream) }
      : replays.run { try log.read { try $0.order(of: stream, at: at) } }
    if at == nil && order.header.version == 0 {
      throw HTTPError(status: 404, message: "no stream \(TerminalText.quoted(stream))")
    }
    var items = ItemTexts(log: log, slots: order.slots)
    var begun = false
    let body = try ResponseStream.start { json in
      if !begun {
        json.snapshotHead(order.header, count: order.slots.count)
        begun = true
      }
      try items.write(into: &json) { json, item, index in json.item(item, index: index) }
      guard items.isDone else { return true }
      json.snapshotTail()
      json.raw("\n")
      return false
    }
    return Response(contentType: "application/json", body: .stream(body))
  }

  /// `log --json` lines, streamed. The events up to the head as it was when
  /// the request came are read in short reads of the log, a piece each time
  /// the client has taken the last: events never change, so this is what
  /// one long read would give.
  func events(_ request: Request) throws -> Response {
    let only = try request.onlyStream()
    // Without a stream, a named token sees only the events of the streams
    // it may read: the seqs it sees have gaps (docs/SERVER.md).
    let caller = request.caller
    let asked = try request.number("from")
    let from = max(asked ?? 1, 1)
    let limit = try request.number("limit") ?? 1000
    guard limit > 0 && limit <= 100_000 else { throw HTTPError.badRequest("limit must be 1 to 100000") }
    let log = self.log
    let head = try log.headSeq()
    // Without a from, a trimmed log's events begin at its horizon.
    if let asked { try log.read { _ = try $0.firstEvent(from: asked, asked: true) } }
    var next = from
    var sent: UInt64 = 0
    // Each piece is read in a snapshot of its own: one that finds history
    // trimmed past `next` ends the answer cut, rather than skip to the
    // horizon (only the first may begin there, from the seq before it).
    var firstPiece = true
    let body = try ResponseStream.start { json in
      guard next <= head && sent < limit else { return false }
      try log.read { snapshot in
        if firstPiece && asked == nil { next = max(next, try snapshot.historyBegins()) }
        next = try snapshot.firstEvent(from: next, asked: firstPiece)
        try snapshot.forEachEvent(from: next) { event in
          guard event.seq <= head else { return false }
          next = event.seq + 1
          if only.map({ event.stream == $0 }) ?? caller.may(.read, event.stream) {
            json.event(event)
            json.raw("\n")
            sent += 1
          }
          return sent < limit && json.bytes.count < ResponseStream.capacity
        }
      }
      firstPiece = false
      if next <= head, json.bytes.isEmpty, sent < limit {
        // The log ended before the head it had: only a damaged log does that.
        throw MsglogError.corruptedLog("the log ends before seq \(head)")
      }
      return next <= head && sent < limit
    }
    return Response(contentType: "application/x-ndjson", body: .stream(body))
  }

  /// `diff --json A B`, from the two lists' orders (read in one snapshot),
  /// with the texts of the inserted and edited items fetched a few at a
  /// time as the client takes them.
  func diff(_ request: Request) throws -> Response {
    let stream = try request.stream()
    guard let a = try request.number("from"), let b = try request.number("to") else {
      throw HTTPError.badRequest("diff needs from and to")
    }
    let log = self.log
    let diff = try replays.run { try log.read { try OrderDiff(stream, from: a, to: b, in: $0) } }
    var writer = DiffWriter(diff, log: log)
    let body = try ResponseStream.start { json in try writer.write(into: &json) }
    return Response(contentType: "application/json", body: .stream(body))
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
    // `from` may be the seq before a trim's horizon; after `Last-Event-ID`
    // the client needs the very next event (`LogSnapshot.firstEvent`).
    var asked = false
    if let last = request.header("last-event-id"), !last.isEmpty {
      next = try Request.number(last, what: "Last-Event-ID") + 1
    } else if let from = try request.number("from") {
      (next, asked) = (max(from, 1), true)
    } else {
      next = head + 1
    }
    if !exists { (next, asked) = (head + 1, false) }
    if next > head + 1 { throw MsglogError.seqBeyondHead(seq: next - 1, head: head) }
    try log.read { [next, asked] in _ = try $0.firstEvent(from: next, asked: asked) }
    let feed = EventFeed(
      log: log, commits: commits, stream: only, next: next, fromAsked: asked, caller: request.caller, gate: gate,
      warnings: warnings)
    return Response(contentType: "text/event-stream", body: .events(feed))
  }
}
