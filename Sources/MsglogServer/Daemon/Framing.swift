/// Where a request's body ends, never guessed (request smuggling: a proxy
/// in front and this server must agree on it): two different
/// `Content-Length`s, a `Content-Length` with a `Transfer-Encoding`
/// (RFC 9112 6.3 lets a server refuse that, and it does), or a transfer
/// coding other than `chunked` is a 400, and the connection is closed.
package enum Framing {
  package static func check(_ headers: [(String, String)]) throws(HTTPError) {
    let lengths = Set(values(of: "content-length", in: headers))
    guard lengths.count <= 1 else { throw .badFraming("the request has two different Content-Length headers") }
    let codings = values(of: "transfer-encoding", in: headers)
    guard !codings.isEmpty else { return }
    guard lengths.isEmpty else {
      throw .badFraming("the request has both Content-Length and Transfer-Encoding: which one frames it is ambiguous")
    }
    guard codings.count == 1, codings[0].lowercased() == "chunked" else {
      throw .badFraming("only Transfer-Encoding: chunked is understood")
    }
  }

  private static func values(of name: String, in headers: [(String, String)]) -> [String] {
    headers.filter { $0.0.lowercased() == name }.map { value in
      var text = Substring(value.1)
      while text.first == " " || text.first == "\t" { text.removeFirst() }
      while text.last == " " || text.last == "\t" { text.removeLast() }
      return String(text)
    }
  }
}
