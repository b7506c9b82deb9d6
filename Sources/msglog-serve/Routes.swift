import Msglog
import MsglogCLI

/// The API: each route reads its parameters, calls `EventLog`, and answers
/// in the shapes `--json` prints. Errors become status codes by their
/// category and keep the command line's wording.
///
///     GET  /api/streams                           streams --json
///     GET  /api/items?stream=S[&at=SEQ]           list --json, or replay --json --at SEQ
///     GET  /api/events?from=SEQ[&limit=N][&stream=S]   log --json (JSON lines)
///     GET  /api/diff?stream=S&from=A&to=B         diff --json
///     GET  /api/follow?stream=S[&from=SEQ]        log --follow --json as Server-Sent Events
///     POST /api/append  {"stream","text","sender","id","expectVersion"}
///     POST /api/insert  {"stream","index","text","sender","id","expectVersion"}
///     POST /api/move    {"stream","from","to","expectVersion"}
///     POST /api/remove  {"stream","id","expectVersion"}
struct Routes {
  let server: HTTPServer
  var log: EventLog { server.log }

  func respond(to request: Request) -> Response {
    do {
      switch (request.method, request.path) {
      case ("GET", "/"), ("HEAD", "/"): return Page.html
      case ("GET", "/app.js"): return Page.script
      case ("GET", "/app.css"): return Page.style
      case ("GET", "/api/streams"): return .json(Format.streamsJSON(try log.streams()))
      case ("GET", "/api/items"): return try items(request)
      case ("GET", "/api/events"): return try events(request)
      case ("GET", "/api/diff"): return try diff(request)
      case ("GET", "/api/follow"): return try follow(request)
      case ("POST", "/api/append"): return try write(request, .append)
      case ("POST", "/api/insert"): return try write(request, .insert)
      case ("POST", "/api/move"): return try write(request, .move)
      case ("POST", "/api/remove"): return try write(request, .remove)
      case (_, "/"), (_, "/app.js"), (_, "/app.css"), (_, "/api/streams"), (_, "/api/items"), (_, "/api/events"),
        (_, "/api/diff"), (_, "/api/follow"), (_, "/api/append"), (_, "/api/insert"), (_, "/api/move"),
        (_, "/api/remove"):
        return Response.error(405, "\(request.method) is not allowed on \(request.path)")
      default:
        return .error(404, "no such route: \(request.path)")
      }
    } catch let error as CommandLineError {
      return .error(400, error.message)
    } catch let error as NotFound {
      return .error(404, error.message)
    } catch let error as MsglogError {
      let (message, _, _) = Wording.words(for: error)
      return .error(Self.status(for: error), message)
    } catch {
      return .error(500, "\(error)")
    }
  }

  /// SPEC.md's mapping: usage 400, unknown stream or item 404, refused 409,
  /// expected-version mismatch 412; damage 500, an unreachable store 503.
  static func status(for error: MsglogError) -> UInt32 {
    switch error.category {
    case .invalidInput: 400
    case .conflict: 412
    case .notFound: 404
    case .refused: 409
    case .damaged: 500
    case .unavailable: 503
    }
  }

  // MARK: - Reads

  private func stream(_ request: Request) throws -> StreamName {
    guard let name = try request.query("stream") else { return .main }
    return try StreamName(validating: name)
  }

  private func number(_ request: Request, _ name: String) throws -> UInt64? {
    guard let text = try request.query(name) else { return nil }
    return try Arguments.number(text, what: name)
  }

  /// A stream no event has named is a 404 for a read of its items now.
  private func requireExists(_ stream: StreamName) throws {
    guard try log.streams().contains(where: { $0.stream == stream }) else {
      throw NotFound(message: "no stream \(TerminalText.quoted(stream))")
    }
  }

  private func items(_ request: Request) throws -> Response {
    let stream = try stream(request)
    let at = try number(request, "at")
    if at == nil { try requireExists(stream) }
    let snapshot = at == nil ? try log.items(of: stream) : try log.replay(stream, at: at)
    let out = OutputStream()
    try Format.writeSnapshotJSON(snapshot, to: out)
    try out.flush()
    return Response(status: 200, contentType: "application/json", body: .bytes(out.captured))
  }

  private func events(_ request: Request) throws -> Response {
    let only = try request.query("stream").map { try StreamName(validating: $0) }
    let from = try number(request, "from") ?? 1
    let limit = try number(request, "limit") ?? 1000
    guard limit > 0 && limit <= 100_000 else { throw CommandLineError.usage("limit must be 1 to 100000") }
    var body: [UInt8] = []
    var writer = Format.EventJSONWriter()
    for event in try log.events(from: max(from, 1), limit: Int(limit), stream: only) {
      writer.append(event, to: &body)
      body.append(UInt8(ascii: "\n"))
    }
    return Response(status: 200, contentType: "application/x-ndjson", body: .bytes(body))
  }

  private func diff(_ request: Request) throws -> Response {
    let stream = try stream(request)
    guard let a = try number(request, "from"), let b = try number(request, "to") else {
      throw CommandLineError.usage("diff needs from and to")
    }
    return .json(Format.diffJSON(try log.diff(stream, from: a, to: b)))
  }

  /// Server-Sent Events from `Last-Event-ID` + 1 (a reconnecting client),
  /// else `from`, else only new events.
  private func follow(_ request: Request) throws -> Response {
    let only = try request.query("stream").map { try StreamName(validating: $0) }
    let head = try log.headSeq()
    let next: UInt64
    if let last = request.header("Last-Event-ID"), !last.isEmpty {
      next = try Arguments.number(last, what: "Last-Event-ID") + 1
    } else if let from = try number(request, "from") {
      next = max(from, 1)
    } else {
      next = head + 1
    }
    if next > head + 1 { throw MsglogError.seqBeyondHead(seq: next - 1, head: head) }
    let feed = EventFeed(server: server, stream: only, next: next)
    return Response(status: 200, contentType: "text/event-stream", body: .events(feed))
  }

  // MARK: - Writes

  enum Operation { case append, insert, move, remove }

  private func write(_ request: Request, _ operation: Operation) throws -> Response {
    var body = try Body(request.body)
    let stream = try body.stream()
    let expected = try body.number("expectVersion")
    let outcome: Outcome?
    switch operation {
    case .append, .insert:
      let index = operation == .insert ? try body.required(body.number("index"), "index") : nil
      let text = try body.required(body.string("text"), "text")
      let sender = try body.string("sender")
      let id = try body.string("id").map { text throws(CommandLineError) in
        guard let id = ItemID(canonical: text) else { throw .usage("invalid id \(TerminalText.quoted(text))") }
        return id
      }
      try body.finish()
      // The library validates text and sender as for the command line.
      if let index {
        outcome = try log.insert(text, at: Int(index), sender: sender, id: id, into: stream, expectVersion: expected)
      } else {
        outcome = try log.append(text, sender: sender, id: id, to: stream, expectVersion: expected)
      }
    case .move:
      let from = try body.required(body.number("from"), "from")
      let to = try body.required(body.number("to"), "to")
      try body.finish()
      outcome = try log.move(from: Int(from), to: Int(to), in: stream, expectVersion: expected)
    case .remove:
      let selector = try ItemSelector(parsing: try body.required(body.string("id"), "id"))
      try body.finish()
      outcome = try log.remove(selector, from: stream, expectVersion: expected)
    }
    guard let outcome else {
      // A move onto itself: nothing appended, as the command line's no-op.
      return .json(#"{"moved":false}"#)
    }
    return .json(Format.outcome(outcome, json: true))
  }
}

/// A 404 for a read that names a stream with no events.
struct NotFound: Error {
  var message: String
}

/// A write's JSON body: an object of known members, each of one type.
struct Body {
  private var members: [String: JSONValue] = [:]
  private var used: Set<String> = []

  init(_ bytes: [UInt8]) throws(CommandLineError) {
    let value: JSONValue
    do { value = try JSONParser.parse(bytes) } catch { throw .usage("the body is not JSON: \(error)") }
    guard case .object(let pairs) = value else { throw .usage("the body must be a JSON object") }
    for (key, value) in pairs { members[key] = value }
  }

  mutating func string(_ key: String) throws(CommandLineError) -> String? {
    used.insert(key)
    switch members[key] {
    case nil, .null?: return nil
    case .string(let text)?: return text
    default: throw .usage("\"\(key)\" must be a string")
    }
  }

  mutating func number(_ key: String) throws(CommandLineError) -> UInt64? {
    used.insert(key)
    switch members[key] {
    case nil, .null?: return nil
    // The command line's numbers (Limits.parseNumber): 0 to 2^63-1.
    case .number(let text)?:
      guard let value = Limits.parseNumber(text) else { throw .usage("\"\(key)\" must be a whole number from 0 to 2^63-1") }
      return value
    default: throw .usage("\"\(key)\" must be a whole number from 0 to 2^63-1")
    }
  }

  func required<T>(_ value: T?, _ key: String) throws(CommandLineError) -> T {
    guard let value else { throw .usage("\"\(key)\" is missing") }
    return value
  }

  mutating func stream() throws -> StreamName {
    guard let name = try string("stream") else { return .main }
    return try StreamName(validating: name)
  }

  /// Refuses members no route reads (a typo must not be ignored).
  func finish() throws(CommandLineError) {
    if let unknown = members.keys.sorted().first(where: { !used.contains($0) }) {
      throw .usage("unknown member \"\(unknown)\"")
    }
  }
}
