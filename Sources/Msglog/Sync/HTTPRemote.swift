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

  package var canceller: @Sendable () -> Void { { [client] in client.cancel() } }

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
      .get(SyncProtocol.helloTarget, accept: "application/json", exchangeTimeout: $0)
    }
    return try decoded { () throws(AnswerProblem) in try RemoteHello(json: answer.body) }
  }

  package func push(_ request: PushRequest) throws -> PushAnswer {
    // A push sent again is answered, not done again: safe to resend on a
    // kept connection the server closed meanwhile.
    let body = request.json
    let answer = try send {
      .post(SyncProtocol.pushPath, json: body, exchangeTimeout: $0, retriesOnStaleConnection: true)
    }
    return try decoded { () throws(AnswerProblem) in try PushAnswer(json: answer.body) }
  }

  /// A page read as it arrives, each record checked as soon as it is
  /// whole and each frame's length before its bytes are waited for
  /// (`PulledPage`): whatever the remote sends, no more than a page is
  /// held before it is refused.
  package func pull(_ request: PullRequest) throws -> RecordPage {
    try exchange {
      let stream = try open(.get(request.target, accept: RecordFrames.contentType, exchangeTimeout: $0))
      defer { stream.close() }
      guard let head = stream.head.value(of: SyncProtocol.headHeader).flatMap({ UInt64($0) }) else {
        throw malformed("its pull answer has no Msglog-Head")
      }
      var page = PulledPage(after: request.after, limit: request.limit, pageBytes: SyncProtocol.pageBytes)
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

  /// The bases as `export`'s base lines, one per stream; each read whole
  /// (a base holds its stream's list, which may be long).
  package func bases(of log: ItemID) throws -> [ImportedBase] {
    try exchange {
      let stream = try open(
        .get(SyncProtocol.basesPath + "?log=\(log.text)&retired=1", accept: "application/x-ndjson", exchangeTimeout: $0)
      )
      defer { stream.close() }
      let body = try stream.readAll(limit: SyncProtocol.basesBytes)
      var bases: [ImportedBase] = []
      for line in body.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
        do {
          bases.append(try ImportedBase(parsing: Array(line)))
        } catch {
          throw malformed("its bases are not base lines: \(error)")
        }
      }
      return bases
    }
  }

  /// Opens the remote's event stream from the next seq and waits for its
  /// first event; a second client, cancelled when one of `stop` signals or
  /// time is up, so the sync's own connection is left as it is.
  package func waitForEvents(after seq: UInt64, seconds: Double, stop: [FollowStop]) throws -> Bool {
    let follower = HTTPClient(url, configuration)
    let bound = try WaitBound(seconds: seconds, stops: stop) { follower.cancel() }
    defer { bound.finish() }
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
      let response = try client.send(request($0), limit: SyncProtocol.answerBytes)
      guard response.status == 200 else { throw refusal(response.status, response.head, response.body) }
      return response
    }
  }

  private func open(_ request: HTTPRequest) throws -> HTTPResponseStream {
    let stream = try client.open(request)
    guard stream.status == 200 else {
      let body = (try? stream.readAll(limit: SyncProtocol.answerBytes)) ?? []
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
    if let refusal = SyncRefusal(status: status, json: body) {
      let message = TerminalText.escape(refusal.message)
      switch refusal.kind {
      case .anotherLog: return .anotherLog(remote: shown, reason: message)
      case .incompatible: return .incompatibleRemote(remote: shown, reason: message)
      case .lostTrack: return .remoteLostTrack(remote: shown, reason: message)
      case .replicaSecret:
        // The remote holds another secret for this replica's id (or none was sent).
        return .replicaSecretRefused(replica: refusal.replica ?? .nil, given: true)
      }
    }
    var message = "it answered \(status)"
    if case .object(let members)? = try? JSONParser.parse(body),
      case .string(let error)? = members.first(where: { $0.0 == "error" })?.1
    {
      message = error
    }
    message = TerminalText.escape(message)
    switch status {
    case 401: return .tokenRefused(remote: shown, reason: message)
    case 403: return .remoteForbids(remote: shown, reason: message)
    case 404, 405:
      return .incompatibleRemote(remote: shown, reason: "it offers no sync (an older msglog serve?): \(message)")
    case 400, 409, 413: return .incompatibleRemote(remote: shown, reason: message)
    default: return .connectionLost(location: shown, reason: "it answered \(status): \(message)")
    }
  }

  private func malformed(_ why: String) -> MsglogError {
    .incompatibleRemote(remote: shown, reason: why)
  }

  /// A message read from an answer, or the answer refused as the remote's
  /// (not the protocol's message: an incompatible remote), in its words.
  private func decoded<M>(_ read: () throws(AnswerProblem) -> M) throws -> M {
    do {
      return try read()
    } catch {
      switch error {
      case .notAnObject: throw malformed("it answered something that is not a JSON object")
      case .helloWithoutProtocol: throw malformed("its hello has no protocol")
      case .pushWithoutHeadOrOutcomes: throw malformed("its answer to a push has no head or outcomes")
      case .outcomeNotAnObject: throw malformed("an outcome is not an object")
      case .appliedWithoutSeq: throw malformed("an applied outcome has no seq")
      case .unknownResult: throw malformed("an outcome is neither applied, unchanged nor refused")
      }
    }
  }
}
