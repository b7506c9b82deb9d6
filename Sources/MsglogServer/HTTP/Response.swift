import Msglog
import MsglogWire

/// What a route answers.
package struct Response: Sendable {
  package enum Body: Sendable {
    case bytes([UInt8])
    /// Written by a producer as the client reads (`/api/items`, `/api/events`).
    case stream(ResponseStream)
    /// Server-Sent Events, until the client or the server goes.
    case events(EventFeed)
  }

  package var status: UInt32
  package var contentType: String
  package var body: Body
  package var headers: [(String, String)] = []
  /// Whose token the request came with, as the request log names it
  /// (`Caller.logName`); nil: none. Never sent.
  package var token: String? = nil
  /// Why a 401, 403 or 429 refused it (`TokenGate.Refusal`, or the
  /// browser's rules: `host`, `origin`); never sent.
  package var refusal: String? = nil

  package init(status: UInt32 = 200, contentType: String, body: Body, headers: [(String, String)] = []) {
    self.status = status
    self.contentType = contentType
    self.body = body
    self.headers = headers
  }

  /// One JSON document.
  package static func json(status: UInt32 = 200, _ body: (inout JSONWriter) throws -> Void) rethrows -> Response {
    var json = JSONWriter()
    try body(&json)
    return Response(status: status, contentType: "application/json", body: .bytes(json.take()))
  }

  /// `{"error":"…"}` with the refusal's status and headers.
  package static func error(_ error: HTTPError) -> Response {
    var response = json(status: error.status) { $0.error(error.message) }
    response.headers = error.headers
    response.refusal = error.reason
    response.token = error.token
    return response
  }

  package func with(header name: String, _ value: String) -> Response {
    var copy = self
    copy.headers.append((name, value))
    return copy
  }

  /// The value of the header `name` (any case); nil when absent.
  package func header(_ name: String) -> String? {
    headers.first { $0.0.lowercased() == name.lowercased() }?.1
  }

  /// The whole body (the in-process tests' reader): a stream is read to
  /// its end, an event stream is not (it has none).
  package var bodyBytes: [UInt8]? {
    switch body {
    case .bytes(let bytes): return bytes
    case .stream(let stream): return stream.readAll()
    case .events: return nil
    }
  }
}
