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

  init(target: String) { self.target = target }

  /// The request line's method and version and every header field.
  func readHeaders(_ connection: OpaquePointer, method: String, version: String) {
    headersRead = true
    self.method = method
    self.version = version
    let context = Unmanaged.passUnretained(self).toOpaque()
    msglog_mhd_headers(connection, { context, name, value in
      let pending = Unmanaged<PendingRequest>.fromOpaque(context!).takeUnretainedValue()
      pending.headers.append((HTTPServer.text(name!), HTTPServer.text(value!)))
    }, context)
  }

  /// A piece of the body. Past the limit the body is still read, without
  /// being kept, so that the 413 reaches a client still sending.
  func receive(_ bytes: UnsafePointer<CChar>?, count: Int) {
    if body.count + count > ServerConfiguration.bodyLimit {
      tooLarge = true
      body = []
    } else if !tooLarge, let bytes {
      body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: count))
    }
  }

  /// The whole request, answered.
  func answer(_ router: Router) -> Response {
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
