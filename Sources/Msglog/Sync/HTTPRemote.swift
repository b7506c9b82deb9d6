import MsglogHTTPClient

/// A remote that is a `msglog serve`: the sync protocol's calls over its
/// routes (docs/SYNC.md, "The protocol"), on one kept connection.
///
/// Each exchange ends within `SyncOptions.exchangeTimeout`, and every
/// exchange of a run (`startRun()`) within `SyncOptions.timeout` of its
/// start, however steadily the remote trickles bytes: a slow or hostile
/// remote cannot hold a sync, or the replica's sync lock, for ever.
package final class HTTPRemote: SyncRemote {
  let url: HTTPURL
  let client: HTTPClient
  let configuration: HTTPClient.Configuration
  package let shown: String
  let timeout: Double
  let exchangeTimeout: Double
  /// When the run under way must end.
  private var runDeadline: Deadline

  /// The longest answer to a hello or a push, in bytes (256 outcomes and
  /// their reasons fit many times over).
  static let answerLimit = 4 << 20

  package init(_ location: String, options: SyncOptions) throws {
    do {
      url = try HTTPURL(location)
    } catch {
      throw MsglogError.invalidInput(.remoteLocation(HTTPURL.redacting(location)))
    }
    shown = url.description
    configuration = HTTPClient.Configuration(
      token: options.token, caFile: options.caFile, userAgent: "msglog/\(msglogVersion)")
    client = HTTPClient(url, configuration)
    timeout = options.timeout
    exchangeTimeout = options.exchangeTimeout
    runDeadline = .after(seconds: options.timeout)
  }

  package func startRun() { runDeadline = .after(seconds: timeout) }

  /// Whether `location` is an `http://` address of a host beyond this
  /// machine (not `localhost`, 127.0.0.0/8 or ::1), where a token would
  /// travel readable by anyone on the way.
  static func isPlainAndBeyondLoopback(_ location: String) -> Bool {
    guard let url = try? HTTPURL(location), url.scheme == .http else { return false }
    switch url.host {
    case .name(let name): return name != "localhost" && !name.hasSuffix(".localhost")
    case .ipv4(let address): return !address.hasPrefix("127.")
    case .ipv6(let address): return address != "::1" && address != "0:0:0:0:0:0:0:1"
    }
  }

  package func hello() throws -> RemoteHello {
    let answer = try send {
      .get("/api/sync?protocol=\(syncProtocolVersion)", accept: "application/json", exchangeTimeout: $0)
    }
    let members = try object(answer.body)
    guard let version = members.integer("protocol") else { throw malformed("its hello has no protocol") }
    return RemoteHello(
      protocolVersion: version, recordFormat: members.integer("format") ?? 1,
      log: members.string("log").flatMap(ItemID.init(canonical:)), head: UInt64(members.integer("head") ?? 0))
  }

  package func push(_ changes: [ReplicaChange], replica: ItemID, secret: ReplicaSecret, log: ItemID) throws
    -> PushAnswer
  {
    var json = JSONWriter()
    json.object { json in
      json.member("protocol", syncProtocolVersion)
      json.member("log", log)
      json.member("replica", replica)
      json.member("secret", secret.hex)
      json.key("changes")
      json.array { json in for change in changes { change.write(to: &json) } }
    }
    // A push sent again is answered, not done again: safe to resend on a
    // kept connection the server closed meanwhile.
    let body = json.take()
    let answer = try send { .post("/api/sync/push", json: body, exchangeTimeout: $0, retriesOnStaleConnection: true) }
    let members = try object(answer.body)
    guard let head = members.integer("head"), case .array(let items)? = members["outcomes"] else {
      throw malformed("its answer to a push has no head or outcomes")
    }
    var outcomes: [ChangeOutcome] = []
    for item in items {
      guard case .object = item else { throw malformed("an outcome is not an object") }
      let outcome = Members(item)
      switch outcome.string("result") {
      case "applied"?:
        guard let seq = outcome.integer("seq") else { throw malformed("an applied outcome has no seq") }
        outcomes.append(.applied(seq: UInt64(seq), rebased: outcome.bool("rebased") ?? false))
      case "unchanged"?: outcomes.append(.unchanged)
      case "refused"?: outcomes.append(.refused(outcome.string("error") ?? "refused"))
      default: throw malformed("an outcome is neither applied, unchanged nor refused")
      }
    }
    return PushAnswer(head: UInt64(head), outcomes: outcomes)
  }

  /// A page read as it arrives, each record checked as soon as it is
  /// whole and each frame's length before its bytes are waited for
  /// (`PulledPage`): whatever the remote sends, no more than a page is
  /// held before it is refused.
  package func pull(after seq: UInt64, check: UInt32?, log: ItemID, limit: Int) throws -> RecordPage {
    var target = "/api/sync/pull?log=\(log.text)&after=\(seq)&limit=\(limit)"
    if let check { target += "&check=\(Hex.text(check, width: 8))" }
    return try exchange {
      let stream = try open(.get(target, accept: RecordFrames.contentType, exchangeTimeout: $0))
      defer { stream.close() }
      guard let head = stream.head.value(of: "Msglog-Head").flatMap({ UInt64($0) }) else {
        throw malformed("its pull answer has no Msglog-Head")
      }
      var page = PulledPage(after: seq, limit: limit, pageBytes: EventLog.pullPageBytes)
      var frames = RecordFrames.Reader()
      do {
        while let piece = try stream.next() {
          try frames.feed(piece, admit: { try page.admit(length: $0) }, take: { try page.take($0) })
        }
        try page.check(head: head)
      } catch let fault as RemoteFault {
        throw MsglogError.remoteFault(remote: shown, fault)
      }
      guard frames.isAtEnd else {
        throw MsglogError.connectionLost(location: shown, reason: "the pull's answer was cut in the middle of a record")
      }
      return RecordPage(head: head, checked: page)
    }
  }

  /// Opens the remote's event stream from the next seq and waits for its
  /// first event; a second client, cancelled when `stop` says so or time
  /// is up, so the sync's own connection is left as it is.
  package func waitForEvents(after seq: UInt64, seconds: Double, stop: @escaping @Sendable () -> Bool) throws -> Bool {
    let follower = HTTPClient(url, configuration)
    let done = Guarded(false)
    let deadline = Deadline.after(seconds: seconds)
    startThread {
      while !done.read({ $0 }) && !deadline.hasPassed && !stop() {
        done.wait(until: { $0 }, deadline: .after(seconds: 0.1)) { _, _ in }
      }
      follower.cancel()
    }
    defer { done.update { $0 = true } }
    do {
      let stream = try follower.open(.get("/api/follow?from=\(seq + 1)", accept: "text/event-stream"))
      guard stream.status == 200 else { return false }
      let events = ServerSentEventReader(stream)
      while let event = try events.next() {
        if event.id != nil { return true }
      }
      return false
    } catch HTTPClientError.cancelled {
      return false
    } catch let error as HTTPClientError {
      throw translate(error)
    }
  }

  // MARK: - Requests

  /// One exchange, its request made with the bound it gets: the exchange's
  /// own, or what is left of the run when that is less.
  private func exchange<R>(_ body: (Double) throws -> R) throws -> R {
    let left = runDeadline.secondsLeft
    guard left > 0 else { throw MsglogError.syncTimedOut(remote: shown, bound: .run, seconds: timeout) }
    do {
      return try body(min(exchangeTimeout, left))
    } catch let error as HTTPClientError {
      throw translate(error)
    }
  }

  private func send(_ request: (Double) -> HTTPRequest) throws -> HTTPResponse {
    try exchange {
      let response = try client.send(request($0), limit: Self.answerLimit)
      guard response.status == 200 else { throw refusal(response.status, response.head, response.body) }
      return response
    }
  }

  private func open(_ request: HTTPRequest) throws -> HTTPResponseStream {
    let stream = try client.open(request)
    guard stream.status == 200 else {
      let body = (try? stream.readAll(limit: Self.answerLimit)) ?? []
      stream.close()
      throw refusal(stream.status, stream.head, body)
    }
    return stream
  }

  /// What the client could not do, as the library says it: the remote
  /// unreachable or cut off (worth trying again), too slow for a bound, or
  /// a certificate that cannot be trusted (no retry mends that).
  private func translate(_ error: HTTPClientError) -> MsglogError {
    switch error {
    case .timedOut(_, .exchange, _):
      return runDeadline.hasPassed
        ? .syncTimedOut(remote: shown, bound: .run, seconds: timeout)
        : .syncTimedOut(remote: shown, bound: .exchange, seconds: exchangeTimeout)
    case .tls(_, .untrusted), .tls(_, .expired), .tls(_, .notYetValid), .tls(_, .revoked), .tls(_, .wrongName),
      .tls(_, .insecureAlgorithm), .tls(_, .caFile):
      return .untrustedRemote(remote: shown, reason: error.description)
    case .unreachable, .tls, .invalidURL, .invalidRequest:
      return .cannotConnect(location: shown, reason: error.description)
    case .timedOut, .connectionLost, .malformedAnswer, .answerTooLarge, .cancelled:
      return .connectionLost(location: shown, reason: error.description)
    }
  }

  /// A refusal the remote answered: its words, as the error of its kind.
  private func refusal(_ status: Int, _ head: HTTPResponseHead, _ body: [UInt8]) -> MsglogError {
    if (300..<400).contains(status) {
      let location = head.value(of: "Location").map { TerminalText.escape(String($0.prefix(200))) }
      return .remoteFault(remote: shown, .redirected(status: status, location: location))
    }
    let members = (try? object(body)) ?? Members(.object([]))
    let message = TerminalText.escape(members.string("error") ?? "it answered \(status)")
    switch (status, members.string("kind")) {
    case (_, "another-log"?): return .anotherLog(remote: shown, reason: message)
    case (_, "incompatible"?): return .incompatibleRemote(remote: shown, reason: message)
    case (403, "replica-secret"?):
      // The remote holds another secret for this replica's id (or none was sent).
      return .replicaSecretRefused(replica: members.string("replica").flatMap(ItemID.init(canonical:)) ?? .nil, given: true)
    case (401, _): return .tokenRefused(remote: shown, reason: message)
    case (403, _): return .remoteForbids(remote: shown, reason: message)
    case (404, _), (405, _):
      return .incompatibleRemote(remote: shown, reason: "it offers no sync (an older msglog serve?): \(message)")
    case (400, _), (409, _), (413, _): return .incompatibleRemote(remote: shown, reason: message)
    default: return .connectionLost(location: shown, reason: "it answered \(status): \(message)")
    }
  }

  private func malformed(_ why: String) -> MsglogError {
    .incompatibleRemote(remote: shown, reason: why)
  }

  private func object(_ body: [UInt8]) throws -> Members {
    guard let value = try? JSONParser.parse(body), case .object = value else {
      throw malformed("it answered something that is not a JSON object")
    }
    return Members(value)
  }

  /// A JSON object's members by name, read leniently (the remote's own answer).
  struct Members {
    let members: [String: JSONValue]

    init(_ value: JSONValue) {
      var members: [String: JSONValue] = [:]
      if case .object(let pairs) = value { for (key, value) in pairs { members[key] = value } }
      self.members = members
    }

    subscript(_ key: String) -> JSONValue? { members[key] }

    func string(_ key: String) -> String? {
      if case .string(let text)? = members[key] { return text }
      return nil
    }

    func integer(_ key: String) -> Int? {
      if case .number(let text)? = members[key], let value = Limits.parseNumber(text) { return Int(value) }
      return nil
    }

    func bool(_ key: String) -> Bool? {
      if case .bool(let flag)? = members[key] { return flag }
      return nil
    }
  }
}
