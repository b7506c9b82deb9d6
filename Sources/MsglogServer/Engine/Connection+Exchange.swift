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
}

extension Connection {
  /// Begins the exchange of a request whose head was read.
  func begin(_ head: RequestHead, path: String?) {
    let given = head.header("x-request-id")
    exchange = Exchange(
      started: .now(), id: core.requestIDs.id(for: given), method: head.method, target: head.target,
      route: path.flatMap { core.router.paths.contains($0) ? $0 : nil } ?? "none")
  }

  /// The answer's status is known: the exchange (begun now if the server
  /// answers without a request) records it; the answer carries its id.
  func answering(_ response: inout Response) {
    if exchange == nil {
      exchange = Exchange(started: .now(), id: core.requestIDs.make(), method: "-", target: "-", route: "none")
    }
    exchange!.status = response.status
    exchange!.writtenBefore = written
    response.headers.append(("X-Request-ID", exchange!.id))
    if case .events = response.body, exchange!.method != "HEAD" {
      exchange!.following = true
      core.metrics?.streamsChanged(by: 1)
    }
  }

  /// The answer is out (or the connection gone): its line, and its counts.
  func endExchange() {
    guard let exchange else { return }
    self.exchange = nil
    if exchange.following { core.metrics?.streamsChanged(by: -1) }
    guard exchange.status != 0 else { return }  // nothing was answered
    let seconds = Double(Deadline.now().nanoseconds - exchange.started.nanoseconds) / 1e9
    core.metrics?.requested(method: exchange.method, route: exchange.route, code: exchange.status, seconds: seconds)
    guard core.requestLog.isOn else { return }
    core.requestLog.write(
      RequestRecord(
        time: .now(), id: exchange.id, client: clientText, method: exchange.method, target: exchange.target,
        status: exchange.status, bytes: written - exchange.writtenBefore, milliseconds: seconds * 1000))
  }

  /// The client's address as text (`127.0.0.1`, `::1`).
  var clientText: String {
    var text = [CChar](repeating: 0, count: 64)
    let family = address.count == 16 ? AF_INET6 : AF_INET
    address.withUnsafeBytes { _ = inet_ntop(family, $0.baseAddress, &text, 64) }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
