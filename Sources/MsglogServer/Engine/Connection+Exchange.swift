import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// One request and its answer, as the request log and the metrics see it:
/// begun when its head is judged (or when the server answers without one:
/// a refused connection, a framing error, a deadline), ended when the last
/// byte of its answer is written or the connection closes under it.
struct Exchange {
  var started: Deadline
  var id: String
  var method: String
  var target: String
  /// The route's path, `none` when the path is no route's.
  var route: String
  var status: UInt32 = 0
  /// `Connection.written` when the answer began.
  var writtenBefore = 0
  /// An event stream that is counted among the followers.
  var following = false
  /// Whose token, and why it was refused (`Response.token`, `.refusal`).
  var token: String? = nil
  var refusal: String? = nil
}

extension Connection {
  /// Begins the exchange of a request whose head was read.
  func begin(_ head: RequestHead, path: String?) {
    if viaProxy { client = core.proxies.client(peer: address, headers: head.headers) }
    let given = head.header("x-request-id")
    // Its bytes count from here: an answer that never begins (499) sent none,
    // whatever the connection's earlier answers sent.
    exchange = Exchange(
      started: .now(), id: core.requestIDs.id(for: given), method: head.method, target: head.target,
      route: path.flatMap { core.router.paths.contains($0) ? $0 : nil } ?? "none", writtenBefore: written)
  }

  /// The answer's status is known: the exchange (begun now if the server
  /// answers without a request) records it; the answer carries its id.
  func answering(_ response: inout Response) {
    if exchange == nil {
      exchange = Exchange(started: .now(), id: core.requestIDs.make(), method: "-", target: "-", route: "none")
    }
    exchange!.status = response.status
    exchange!.writtenBefore = written
    exchange!.token = response.token
    exchange!.refusal = response.refusal ?? ([401, 403].contains(response.status) ? "policy" : nil)
    response.headers.append(("X-Request-ID", exchange!.id))
    if case .events = response.body, exchange!.method != "HEAD" {
      exchange!.following = true
      core.metrics?.streamsChanged(by: 1)
    }
  }

  /// The answer is out (or the connection gone): its line, and its counts.
  func endExchange() {
    defer {
      // A proxy's connection between requests is no client's.
      if viaProxy, let client = countedUnder { core.count.release(client) }
      if viaProxy { (countedUnder, client) = (nil, address) }
    }
    guard var exchange else { return }
    self.exchange = nil
    if exchange.following { core.metrics?.streamsChanged(by: -1) }
    if exchange.status == 0 {
      // A request whose client went before its answer began (a body cut
      // off, the connection closed while the request was done): logged
      // and counted as 499, nginx's word for it, nothing sent — a flood of
      // abandoned uploads had left no line and moved no count.
      exchange.status = Self.closedBeforeAnswer
    }
    let seconds = Double(Deadline.now().nanoseconds(since: exchange.started)) / 1e9
    core.metrics?.requested(method: exchange.method, route: exchange.route, code: exchange.status, seconds: seconds)
    if let refusal = exchange.refusal { core.metrics?.refused(reason: refusal) }
    guard core.requestLog.isOn else { return }
    core.requestLog.write(
      RequestRecord(
        time: .now(), id: exchange.id, client: clientText, token: exchange.token, method: exchange.method,
        target: exchange.target, status: exchange.status, bytes: written - exchange.writtenBefore,
        milliseconds: seconds * 1000, refusal: exchange.refusal))
  }

  /// The status logged for a request whose client closed the connection
  /// before its answer began.
  static let closedBeforeAnswer: UInt32 = 499

  /// The client's address as text (`127.0.0.1`, `::1`).
  var clientText: String { TrustedProxies.text(client) }

  /// The request of a head (and its body), with what a trusted proxy says
  /// of the scheme its client used.
  func request(_ head: RequestHead, body: [UInt8] = []) throws(HTTPError) -> Request {
    var request = try Request(
      method: head.method, target: head.target, version: head.version, headers: head.headers, body: body)
    request.forwardedScheme = core.proxies.scheme(peer: address, headers: head.headers)
    request.client = clientText
    return request
  }

  /// What the connection refuses before the request is routed: plain HTTP
  /// on the HTTPS port (read as a request, so it has its log line and
  /// counts), and a proxy's request from a client that already has its
  /// share of connections — a proxy's connection counts under its client
  /// from here to the answer's end (`endExchange`).
  func refusalBeforeRouting(_ head: RequestHead) -> HTTPError? {
    if transport.carriesPlainHTTPOnHTTPSPort {
      return HTTPError(
        status: 400, message: "this port speaks HTTPS: use an https:// URL", headers: [("Connection", "close")])
    }
    guard viaProxy else { return nil }
    guard core.count.attribute(client) else {
      core.warnings.warn(
        "address", "\(core.count.limits.perAddress) connections from one address are open: answering 503")
      return HTTPError(
        status: 503, message: "too many connections from your address; close some and retry",
        headers: [("Connection", "close")])
    }
    countedUnder = client
    return nil
  }
}
