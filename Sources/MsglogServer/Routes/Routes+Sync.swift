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
        .get, "/api/sync", needsToken: true, takes: "?protocol=N",
        answers: #"`{"protocol","format","log","head"}`: the server's sync protocol, the newest record format its log holds, its log id (null for a log made before logs had one) and head; 409 for a protocol newer than its own"#,
        refusals: [404, 409]
      ) { try api.syncHello($0) },
      Route(
        .post, "/api/sync/push", needsToken: true, takes: #"{"protocol","log","replica","secret","changes"}"#,
        answers: #"`{"head","outcomes"}`: each change done at most once, in order, in one transaction (`{"change","result":"applied","seq","rebased"}`, `"unchanged"`, or `"refused"` with `"error"`); 403 when `secret` (64 hex digits) is not the replica's; 409 for another log or a change out of order"#,
        refusals: [403, 404, 409, 413]
      ) { try api.syncPush($0) },
      Route(
        .get, "/api/sync/pull", needsToken: true,
        query: Route.names(in: "?log=ID&after=SEQ&check=CRC&limit=N").map { Route.Field($0.name, .any, $0.placeholder, "") },
        success: .init(200, RecordFrames.contentType, .text, "the records after SEQ, each a u32 length and its bytes"),
        refusals: [404, 409],
        answers: "`application/vnd.msglog.records`: the records after SEQ, each a u32 length and its bytes (limit 0–4096, default 4096, at most 1 MiB past the first; 0 only checks); `Msglog-Head`: the head; 409 when the record at SEQ is not the replica's (its CRC-32C, 8 hex digits) or the log is another"
      ) { try api.syncPull($0) },
    ]
  }

  func syncHello(_ request: Request) throws -> Response {
    guard let version = try request.number("protocol") else {
      throw HTTPError.badRequest("a sync hello needs the replica's protocol: ?protocol=N")
    }
    guard version <= UInt64(syncProtocolVersion) else {
      return Self.syncRefusal(
        .incompatible,
        "this server speaks sync protocol \(syncProtocolVersion), the replica's msglog \(version): upgrade msglog serve")
    }
    let hello = try log.syncHello()
    return .json { json in
      json.object { json in
        json.member("protocol", hello.protocolVersion)
        json.member("format", hello.recordFormat)
        json.key("log")
        if let id = hello.log { json.value(id) } else { json.null() }
        json.member("head", hello.head)
      }
    }
  }

  func syncPush(_ request: Request) throws -> Response {
    let value: JSONValue
    do { value = try JSONParser.parse(request.body) } catch {
      throw HTTPError.badRequest("the body is not JSON: \(error)")
    }
    guard case .object(let pairs) = value else { throw HTTPError.badRequest("the body must be a JSON object") }
    var members: [String: JSONValue] = [:]
    for (key, value) in pairs { members[key] = value }
    if let unknown = members.keys.sorted().first(where: {
      !["protocol", "log", "replica", "secret", "changes"].contains($0)
    }) {
      throw HTTPError.badRequest("unknown member \"\(unknown)\"")
    }
    guard case .number(let text)? = members["protocol"], let version = Limits.parseNumber(text) else {
      throw HTTPError.badRequest("\"protocol\" must be the replica's sync protocol, a whole number")
    }
    guard version <= UInt64(syncProtocolVersion) else {
      return Self.syncRefusal(
        .incompatible,
        "this server speaks sync protocol \(syncProtocolVersion), the replica's msglog \(version): upgrade msglog serve")
    }
    func id(_ key: String) throws(HTTPError) -> ItemID {
      guard case .string(let text)? = members[key], let id = ItemID(canonical: text) else {
        throw .badRequest("\"\(key)\" must be a UUID")
      }
      return id
    }
    let logID = try id("log")
    let replica = try id("replica")
    var secret: ReplicaSecret? = nil
    if let given = members["secret"] {
      guard case .string(let text) = given, let parsed = ReplicaSecret(hex: text) else {
        throw HTTPError.badRequest("\"secret\" must be the replica's secret: 64 lowercase hex digits")
      }
      secret = parsed
    }
    guard case .array(let items)? = members["changes"] else { throw HTTPError.badRequest("\"changes\" must be an array") }
    guard items.count <= EventLog.pushBatchChanges else {
      throw HTTPError(status: 413, message: "a push carries at most \(EventLog.pushBatchChanges) changes")
    }
    var changes: [ReplicaChange] = []
    for (index, item) in items.enumerated() {
      do { changes.append(try ReplicaChange(json: item)) } catch {
        throw HTTPError.badRequest("change \(index + 1) of the push: \(error)")
      }
    }
    let answer: PushAnswer
    do {
      answer = try log.doChanges(changes, by: replica, secret: secret, log: logID)
    } catch let error as MsglogError {
      if let refusal = Self.syncRefusal(error) { return refusal }
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
    return .json { json in
      json.object { json in
        json.member("head", answer.head)
        json.key("outcomes")
        json.array { json in
          for (change, outcome) in zip(changes, answer.outcomes) {
            json.object { json in
              json.member("change", change.number)
              switch outcome {
              case .applied(let seq, let rebased):
                json.member("result", "applied")
                json.member("seq", seq)
                json.member("rebased", rebased)
              case .unchanged:
                json.member("result", "unchanged")
              case .refused(let reason):
                json.member("result", "refused")
                json.member("error", reason)
              }
            }
          }
        }
      }
    }
  }

  func syncPull(_ request: Request) throws -> Response {
    guard let logText = request.query["log"], let logID = ItemID(canonical: logText) else {
      throw HTTPError.badRequest("a pull needs the replica's log id: ?log=UUID")
    }
    let after = try request.number("after") ?? 0
    let limit = Int(try request.number("limit") ?? UInt64(EventLog.pullPageRecords))
    guard limit >= 0, limit <= EventLog.pullPageRecords else {
      throw HTTPError.badRequest("limit must be 0 to \(EventLog.pullPageRecords)")
    }
    var check: UInt32? = nil
    if let text = request.query["check"] {
      guard text.utf8.count == 8, let bytes = Hex.bytes(text.utf8) else {
        throw HTTPError.badRequest("check must be the record's CRC-32C as 8 hex digits")
      }
      check = bytes.withUnsafeBytes { $0.loadBigEndian(as: UInt32.self) }
    }
    // The check, and the head the page stops at, before the first byte.
    let head: UInt64
    do {
      head = try log.records(after: after, check: check, log: logID, limit: 0) { _, _ in }
    } catch let error as MsglogError {
      if let refusal = Self.syncRefusal(error) { return refusal }
      throw error
    }
    let log = self.log
    let end = min(head, after + UInt64(limit))
    var next = after + 1
    var bytes = 0
    let body = try ResponseStream.start { out in
      guard next <= end, bytes < EventLog.pullPageBytes || next == after + 1 else { return false }
      // Records never change: short reads, one after another, give what
      // one read would; a piece at a time as the client takes them.
      _ = try log.records(after: next - 1, check: nil, log: logID, limit: Int(min(end - next + 1, 256))) { seq, record in
        guard seq <= end else { return }
        var frame: [UInt8] = []
        RecordFrames.append(record, to: &frame)
        frame.withUnsafeBytes { out.raw(bytes: $0) }
        bytes += record.count
        next = seq + 1
      }
      return next <= end && bytes < EventLog.pullPageBytes
    }
    return Response(contentType: RecordFrames.contentType, body: .stream(body), headers: [("Msglog-Head", String(head))])
  }

  /// Why a sync cannot go on, with the kind a replica tells its errors by.
  enum SyncRefusalKind: String {
    case anotherLog = "another-log"
    case incompatible
    /// The push's secret is not the replica's (403): nothing was done.
    case replicaSecret = "replica-secret"
  }

  static func syncRefusal(_ kind: SyncRefusalKind, _ message: String, replica: ItemID? = nil) -> Response {
    .json(status: kind == .replicaSecret ? 403 : 409) { json in
      json.object { json in
        json.member("error", message)
        json.member("kind", kind.rawValue)
        if let replica { json.member("replica", replica) }
      }
    }
  }

  /// A sync refusal the library made, as its answer; nil for any other error.
  static func syncRefusal(_ error: MsglogError) -> Response? {
    switch error {
    case .anotherLog(_, let reason): return syncRefusal(.anotherLog, reason)
    case .incompatibleRemote(_, let reason): return syncRefusal(.incompatible, reason)
    case .changeOutOfOrder, .changeForgotten: return syncRefusal(.incompatible, error.description)
    case .replicaSecretRefused(let replica, _): return syncRefusal(.replicaSecret, error.description, replica: replica)
    default: return nil
    }
  }
}
