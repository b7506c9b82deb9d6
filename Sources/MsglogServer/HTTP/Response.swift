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
  /// Refused by its head (host, route, method, token, scope): the
  /// connection closes after it, so that nothing pipelined behind it is
  /// read as a request (SPEC), also when its token took a worker's lookup.
  package var closesConnection = false

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

  /// A request that could not be decoded, answered to a browser's
  /// navigation (someone followed a link whose stream name holds a control
  /// character, say): the same status, headers and log line as `error`,
  /// as a small page with a link to the page itself, where `{"error":…}`
  /// would show raw JSON. It says what can be wrong in general, not the
  /// client's words (a link could otherwise put any sentence on a page of
  /// this origin), and runs and loads nothing (`default-src 'none'`).
  package static func malformed(_ error: HTTPError, head: RequestHead) -> Response {
    var response = Response.error(error)
    guard head.method == "GET", head.header("sec-fetch-mode") == "navigate" else { return response }
    response.contentType = "text/html; charset=utf-8"
    response.body = .bytes(Array(malformedPage.utf8))
    return response
  }

  static let malformedPage = """
    <!doctype html>
    <html lang="en"><head><meta charset="utf-8">\
    <meta name="viewport" content="width=device-width, initial-scale=1"><title>msglog: this link is not right</title></head>
    <body><main><h1>This link is not right</h1>
    <p>The server could not read its address: it has a malformed %-escape, a control character, an encoded slash, \
    invalid UTF-8 or a parameter given twice.</p>
    <p><a href="/">Open msglog</a></p></main></body></html>

    """

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
