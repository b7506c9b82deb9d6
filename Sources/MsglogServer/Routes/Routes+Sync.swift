import Msglog
import MsglogWire

/// The sync protocol (docs/SYNC.md, "The protocol"): a replica's hello,
/// push and pull, under the same rules as every `/api/` route (the token,
/// the browser's rules for a POST, bounded bodies, answers pulled a piece
/// at a time).
extension Routes {
  static func syncRoutes(_ api: Routes) -> [Route] {
    [
      Route(
        .get, SyncProtocol.helloPath, needsToken: true, permission: .anyToken, takes: "?protocol=N",
        answers:
          #"`{"protocol","format","log","head"}`: the server's sync protocol, the newest record format its log holds, its log id (null for a log made before logs had one) and head, and `"horizon"` for a trimmed log; 409 for a protocol newer than its own"#,
        refusals: [404, 409]
      ) { try api.syncHello($0) },
      Route(
        .post, SyncProtocol.pushPath, needsToken: true, permission: .anyToken,
        takes: #"{"protocol","log","replica","secret","changes"}"#,
        answers:
          #"`{"head","outcomes"}`: each change done at most once, in order, in one transaction (`{"change","result":"applied","seq","rebased"}`, `"unchanged"`, or `"refused"` with its `"reason"`, `{"code",…}`, and `"error"`, its words); 403 when `secret` (64 hex digits) is not the replica's; 409 for another log or a change out of order"#,
        refusals: [403, 404, 409, 413]
      ) { try api.syncPush($0) },
      Route(
        .get, SyncProtocol.pullPath, needsToken: true, permission: .everyStream,
        query: Route.names(in: "?log=ID&after=SEQ&check=CRC&limit=N").map {
          Route.Field($0.name, .any, $0.placeholder, "")
        },
        success: .init(200, RecordFrames.contentType, .text, "the records after SEQ, each a u32 length and its bytes"),
        refusals: [404, 409],
        answers:
          "`application/vnd.msglog.records`: the records after SEQ, each a u32 length and its bytes (limit 0–4096, default 4096, at most 1 MiB past the first; 0 only checks); `Msglog-Head`: the head; 409 when the record at SEQ is not the replica's (its CRC-32C, 8 hex digits) or the log is another"
      ) { try api.syncPull($0) },
      Route(
        .get, SyncProtocol.basesPath, needsToken: true, permission: .everyStream,
        query: [
          Route.Field("log", .any, "ID", ""),
          Route.Field("retired", .any, "1", "with the items removed before the horizon (a replica of this msglog on)"),
        ],
        success: .init(200, "application/x-ndjson", .text, "the bases, as `export`'s base lines"),
        refusals: [404, 409],
        answers:
          "`application/x-ndjson`: a trimmed log's bases (`msglog trim`), one line per stream as `export` begins with them, for a replica that starts from them (nothing for a log never trimmed); their `\"retired\"` members only with `retired=1`, which a replica from before them does not send (it would refuse the line); 409 for another log"
      ) { try api.syncBases($0) },
    ]
  }

  func syncBases(_ request: Request) throws -> Response {
    guard let text = request.query["log"], let id = ItemID(canonical: text) else {
      throw HTTPError.badRequest("the bases need the replica's log id: ?log=UUID")
    }
    let bases: [ImportedBase]
    do {
      bases = try log.syncBases(log: id)
    } catch let error as MsglogError {
      if let refusal = Self.syncRefusal(error) { return Self.respond(refusal) }
      throw error
    }
    // A replica from before retired items refuses a base line naming them:
    // it gets the bases as they were (its ids then are only as unique as
    // they were), one of this msglog on asks for them.
    let retired = request.query["retired"] == "1"
    var lines: [UInt8] = []
    for var base in bases {
      if !retired { base.retired = [] }
      var line = JSONWriter()
      line.base(base)
      lines += line.take()
      lines.append(UInt8(ascii: "\n"))
    }
    return Response(status: 200, contentType: "application/x-ndjson", body: .bytes(lines))
  }

  func syncHello(_ request: Request) throws -> Response {
    guard let version = try request.number("protocol") else {
      throw HTTPError.badRequest("a sync hello needs the replica's protocol: ?protocol=N")
    }
    guard SyncProtocol.speaks(version) else { return Self.respond(Self.newerProtocol(version)) }
    let hello = try log.syncHello()
    return .json { hello.write(to: &$0) }
  }

  func syncPush(_ request: Request) throws -> Response {
    let push: PushRequest
    do {
      push = try PushRequest(json: request.body)
    } catch {
      switch error {
      case .notJSON(let error): throw HTTPError.badRequest("the body is not JSON: \(error)")
      case .notAnObject: throw HTTPError.badRequest("the body must be a JSON object")
      case .unknownMember(let name): throw HTTPError.badRequest("unknown member \"\(name)\"")
      case .noProtocol: throw HTTPError.badRequest("\"protocol\" must be the replica's sync protocol, a whole number")
      case .newerProtocol(let version): return Self.respond(Self.newerProtocol(version))
      case .notAnID(let member): throw HTTPError.badRequest("\"\(member)\" must be a UUID")
      case .malformedSecret:
        throw HTTPError.badRequest("\"secret\" must be the replica's secret: 64 lowercase hex digits")
      case .changesNotAnArray: throw HTTPError.badRequest("\"changes\" must be an array")
      case .tooManyChanges:
        throw HTTPError(status: 413, message: "a push carries at most \(SyncProtocol.pushChanges) changes")
      case .malformedChange(let position, let error):
        throw HTTPError.badRequest("change \(position) of the push: \(error)")
      }
    }
    // A token that may write no stream has nothing a push could apply:
    // refused whole, so that pushes under ever new replica ids cannot make
    // the log keep their refused outcomes (a rightless token filling the
    // disk). A token that may write somewhere pushes as ever; its refused
    // changes are kept, as its own appends would be.
    if case .named(let token) = request.caller, token.scopes.patterns(giving: .write).isEmpty {
      throw TokenGate.forbidden("token \(token.name) may not write any stream, which a push needs")
    }
    let answer: PushAnswer
    do {
      var pusher: NamedToken? = nil
      if case .named(let token) = request.caller { pusher = token }
      answer = try log.doChanges(push, as: pusher)
    } catch let error as MsglogError {
      if let refusal = Self.syncRefusal(error) { return Self.respond(refusal) }
      throw error
    }
    if let metrics {
      metrics.syncChanges(result: .duplicate, count: answer.resent)
      for outcome in answer.outcomes.dropFirst(answer.resent) {
        switch outcome {
        case .applied(_, let rebased): metrics.syncChanges(result: rebased ? .rebased : .applied)
        case .unchanged: metrics.syncChanges(result: .applied)
        case .refused: metrics.syncChanges(result: .refused)
        }
      }
    }
    // A refusal in the library's words, for a person and for a replica
    // from before reasons had codes.
    return Response(
      contentType: "application/json", body: .bytes(answer.json(answering: push, words: \.description)))
  }

  func syncPull(_ request: Request) throws -> Response {
    let pull: PullRequest
    do {
      pull = try PullRequest(query: { request.query[$0] })
    } catch {
      switch error {
      case .noLog: throw HTTPError.badRequest("a pull needs the replica's log id: ?log=UUID")
      case .notANumber(let member, let text): _ = try Request.number(text, what: member)
      case .limitOutOfRange: throw HTTPError.badRequest("limit must be 0 to \(SyncProtocol.pageRecords)")
      case .malformedCheck: throw HTTPError.badRequest("check must be the record's CRC-32C as 8 hex digits")
      }
      preconditionFailure("Request.number refuses what PullRequest does")
    }
    // The check, and the head the page stops at, before the first byte.
    let head: UInt64
    do {
      var check = pull
      check.limit = 0
      head = try log.records(check) { _, _ in }
    } catch let error as MsglogError {
      if let refusal = Self.syncRefusal(error) { return Self.respond(refusal) }
      throw error
    }
    let log = self.log
    let after = pull.after
    let end = min(head, after + UInt64(pull.limit))
    var next = after + 1
    var bytes = 0
    let body = try ResponseStream.start { out in
      guard next <= end, bytes < SyncProtocol.pageBytes || next == after + 1 else { return false }
      // Records never change: short reads, one after another, give what
      // one read would; a piece at a time as the client takes them.
      let piece = PullRequest(log: pull.log, after: next - 1, check: nil, limit: Int(min(end - next + 1, 256)))
      _ = try log.records(piece) { seq, record in
        // The page's rule, record by record (a piece counts its own bytes
        // from zero): a record starts only while the page holds less than
        // a page's bytes, the first aside, as the replica checks.
        guard seq <= end, bytes < SyncProtocol.pageBytes || seq == after + 1 else { return }
        var frame: [UInt8] = []
        RecordFrames.append(record, to: &frame)
        frame.withUnsafeBytes { out.raw(bytes: $0) }
        bytes += record.count
        next = seq + 1
      }
      return next <= end && bytes < SyncProtocol.pageBytes
    }
    return Response(
      contentType: RecordFrames.contentType, body: .stream(body), headers: [(SyncProtocol.headHeader, String(head))])
  }

  /// The refusal of a replica whose protocol is newer than this server's.
  static func newerProtocol(_ version: UInt64) -> SyncRefusal {
    SyncRefusal(
      .incompatible,
      "this server speaks sync protocol \(SyncProtocol.version), the replica's msglog \(version): upgrade msglog serve")
  }

  /// A sync refusal the library made, in its words; nil for any other error.
  static func syncRefusal(_ error: MsglogError) -> SyncRefusal? {
    switch error {
    case .anotherLog(_, let reason): return SyncRefusal(.anotherLog, reason)
    case .incompatibleRemote(_, let reason): return SyncRefusal(.incompatible, reason)
    case _ where error.isLostTrack: return SyncRefusal(.lostTrack, error.description)
    case .replicaSecretRefused(let replica, _): return SyncRefusal(.replicaSecret, error.description, replica: replica)
    default: return nil
    }
  }

  static func respond(_ refusal: SyncRefusal) -> Response {
    Response(status: UInt32(refusal.status), contentType: "application/json", body: .bytes(refusal.json))
  }
}
