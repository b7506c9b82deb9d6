import CMicroHTTPD
import Msglog

/// A request being received by libmicrohttpd: its target as sent, then its
/// headers, then its body in pieces; answered once the body is complete.
final class PendingRequest {
  let target: String
  private(set) var headersRead = false
  private var method = ""
  private var version = ""
  private var headers: [(String, String)] = []
  private var body: [UInt8] = []
  private var tooLarge = false
  /// Decided from the headers: the body is read (and dropped) first, so
  /// that the answer reaches a client still sending.
  private var refusal: HTTPError? = nil

  init(target: String) { self.target = target }

  /// The request line's method and version and every header field; a
  /// refusal to send at once when the framing cannot be trusted.
  func readHeaders(_ connection: OpaquePointer, method: String, version: String, router: Router) -> HTTPError? {
    headersRead = true
    self.method = method
    self.version = version
    let context = Unmanaged.passUnretained(self).toOpaque()
    msglog_mhd_headers(
      connection,
      { context, name, value in
        let pending = Unmanaged<PendingRequest>.fromOpaque(context!).takeUnretainedValue()
        pending.headers.append((HTTPServer.text(name!), HTTPServer.text(value!)))
      }, context)
    do {
      try Framing.check(headers)
    } catch {
      return error
    }
    do {
      let head = try Request(method: method, target: target, version: version, headers: headers)
      if case .refused(let error) = router.resolve(head) { refusal = error }
    } catch {
      refusal = error
    }
    return nil
  }

  /// A piece of the body. Past the limit, or when the request is refused
  /// anyway, the body is still read, without being kept.
  func receive(_ bytes: UnsafePointer<CChar>?, count: Int) {
    if refusal != nil { return }
    if body.count + count > ServerConfiguration.bodyLimit {
      tooLarge = true
      body = []
    } else if !tooLarge, let bytes {
      body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: count))
    }
  }

  /// The whole request, answered.
  func answer(_ router: Router) -> Response {
    if let refusal { return .error(refusal) }
    if tooLarge {
      return .error(HTTPError(status: 413, message: "the request body is over \(ServerConfiguration.bodyLimit) bytes"))
    }
    do {
      let request = try Request(method: method, target: target, version: version, headers: headers, body: body)
      return router.respond(to: request)
    } catch {
      return .error(error)
    }
  }
}
