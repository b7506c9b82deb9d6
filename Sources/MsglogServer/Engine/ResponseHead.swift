/// A response's status line and header fields, as bytes: every answer the
/// server sends goes through here, so each carries the same security
/// headers, whatever made it (a route, a refusal of the framing, a limit).
enum ResponseHead {
  /// How the body is delimited on the wire.
  enum Delimiting {
    case length(Int)
    case chunked
    /// HTTP/1.0 without a length: the body ends with the connection.
    case close
    /// 204, 304, 100: no body at all.
    case none
  }

  /// What every answer carries, unless its route says otherwise: no
  /// sniffing, nothing cached, and for anything that is not the page, a
  /// policy that lets a browser run or frame nothing of it.
  static let security: [(String, String)] = [
    ("X-Content-Type-Options", "nosniff"),
    ("Cache-Control", "no-store"),
    ("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'"),
  ]

  static func encode(
    status: UInt32, contentType: String?, headers: [(String, String)], delimiting: Delimiting, close: Bool
  ) -> [UInt8] {
    var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
    if let contentType { text += "Content-Type: \(contentType)\r\n" }
    for (name, value) in headers where name.lowercased() != "connection" { text += "\(name): \(value)\r\n" }
    for (name, value) in security where !headers.contains(where: { $0.0.lowercased() == name.lowercased() }) {
      text += "\(name): \(value)\r\n"
    }
    switch delimiting {
    case .length(let count): text += "Content-Length: \(count)\r\n"
    case .chunked: text += "Transfer-Encoding: chunked\r\n"
    case .close, .none: break
    }
    if close { text += "Connection: close\r\n" }
    text += "\r\n"
    return Array(text.utf8)
  }

  static func reason(_ status: UInt32) -> String {
    switch status {
    case 100: return "Continue"
    case 200: return "OK"
    case 204: return "No Content"
    case 304: return "Not Modified"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 408: return "Request Timeout"
    case 409: return "Conflict"
    case 410: return "Gone"
    case 411: return "Length Required"
    case 412: return "Precondition Failed"
    case 413: return "Content Too Large"
    case 414: return "URI Too Long"
    case 415: return "Unsupported Media Type"
    case 417: return "Expectation Failed"
    case 422: return "Unprocessable Content"
    case 429: return "Too Many Requests"
    case 431: return "Request Header Fields Too Large"
    case 500: return "Internal Server Error"
    case 503: return "Service Unavailable"
    case 505: return "HTTP Version Not Supported"
    default: return "Status"
    }
  }
}
