/// An answer's status line and header fields, as the server sent them.
package struct HTTPResponseHead: Sendable, Equatable {
  /// `HTTP/1.1` or `HTTP/1.0`.
  package var version: String
  package var status: Int
  package var reason: String
  /// In the order sent; names as sent (compare them without case).
  package var headers: [HTTPHeader]

  package init(version: String = "HTTP/1.1", status: Int, reason: String = "", headers: [HTTPHeader] = []) {
    self.version = version
    self.status = status
    self.reason = reason
    self.headers = headers
  }

  /// Every value of the field `name` (any case), in order.
  package func values(of name: String) -> [String] {
    let name = name.lowercased()
    return headers.filter { $0.name.lowercased() == name }.map(\.value)
  }

  /// The first value of the field `name` (any case).
  package func value(of name: String) -> String? { values(of: name).first }

  /// The comma-separated elements of every `name` field, trimmed, in
  /// lowercase (`Connection: keep-alive, Upgrade`).
  func elements(of name: String) -> [String] {
    values(of: name).flatMap { $0.split(separator: ",") }.map { element in
      var text = Substring(element)
      while text.first == " " || text.first == "\t" { text.removeFirst() }
      while text.last == " " || text.last == "\t" { text.removeLast() }
      return text.lowercased()
    }.filter { !$0.isEmpty }
  }
}

/// One header field.
package struct HTTPHeader: Sendable, Equatable, Hashable {
  package var name: String
  package var value: String

  package init(_ name: String, _ value: String) {
    self.name = name
    self.value = value
  }
}
