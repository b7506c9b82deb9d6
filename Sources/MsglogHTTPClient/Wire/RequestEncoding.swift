import MsglogHTTPWire

extension HTTPRequest {
  /// The request as it goes on the wire, with the client's own fields;
  /// throws `.invalidRequest` for a method, target or field that HTTP
  /// cannot carry (a token with a line break would add a header).
  func encoded(for url: HTTPURL, token: String?, userAgent: String) throws -> [UInt8] {
    guard !method.isEmpty, method.utf8.allSatisfy(HTTPHeadParser.isTokenByte) else {
      throw HTTPClientError.invalidRequest("the method \(method) is not an HTTP token")
    }
    guard target.hasPrefix("/"), target.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
      throw HTTPClientError.invalidRequest("the request target \(target) is not a path from / in ASCII without spaces")
    }
    var fields = [
      HTTPHeader("Host", url.hostHeader), HTTPHeader("User-Agent", userAgent),
    ]
    if let token { fields.append(HTTPHeader("Authorization", "Bearer " + token)) }
    fields += headers
    if let body {
      fields.append(HTTPHeader("Content-Length", String(body.count)))
    } else if method == "POST" || method == "PUT" {
      fields.append(HTTPHeader("Content-Length", "0"))
    }
    var text = method + " " + url.target(target) + " HTTP/1.1\r\n"
    for field in fields {
      guard !field.name.isEmpty, field.name.utf8.allSatisfy(HTTPHeadParser.isTokenByte) else {
        throw HTTPClientError.invalidRequest("the header name \(field.name) is not an HTTP token")
      }
      guard field.value.utf8.allSatisfy(HTTPHeadParser.isValueByte) else {
        // Never the value itself: it may be the token.
        throw HTTPClientError.invalidRequest("the \(field.name) header has a control character (a line break?)")
      }
      text += field.name + ": " + field.value + "\r\n"
    }
    text += "\r\n"
    return Array(text.utf8) + (body ?? [])
  }
}
