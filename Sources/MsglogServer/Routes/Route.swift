/// One route: a method and a path, whether it needs the token, what it is
/// for (the route list in docs/REFERENCE.md is written from these), and
/// its handler.
///
/// Routes are declared once, in a table (`Routes.table`), from which the
/// router dispatches, answers 404 and 405 (with `Allow`), serves `HEAD`
/// wherever `GET` is served, and the documentation is written: hummingbird's
/// router, as a table.
package struct Route: Sendable {
  package enum Method: String, Sendable {
    case get = "GET"
    case post = "POST"
  }

  package var method: Method
  package var path: String
  /// Every `/api/` route does when a token is set; the page's files do not
  /// (a browser cannot attach a token to a navigation, and they hold no data).
  package var needsToken: Bool
  /// The query or body it takes, as the documentation shows it.
  package var takes: String
  /// What it answers, as the documentation shows it.
  package var answers: String
  /// The query parameters it reads; any other is refused (400), as an
  /// unknown member of a body is: a typo must not be ignored.
  package var parameters: Set<String>
  package var handler: @Sendable (Request) throws -> Response

  package init(
    _ method: Method, _ path: String, needsToken: Bool, takes: String = "", answers: String,
    handler: @escaping @Sendable (Request) throws -> Response
  ) {
    self.method = method
    self.path = path
    self.needsToken = needsToken
    self.takes = takes
    self.answers = answers
    self.handler = handler
    parameters = method == .get ? Self.parameters(in: takes) : []
  }

  /// The names in a `takes` of the form `?a=A&b=B`.
  static func parameters(in takes: String) -> Set<String> {
    guard takes.hasPrefix("?") else { return [] }
    return Set(takes.dropFirst().split(separator: "&").map { String($0.prefix { $0 != "=" }) })
  }

  /// The methods it answers: `HEAD` wherever `GET`.
  var methods: [String] { method == .get ? ["GET", "HEAD"] : [method.rawValue] }
}

extension [Route] {
  /// The API's routes as the Markdown table docs/REFERENCE.md shows (a test
  /// keeps the two the same).
  package var markdownTable: String {
    var lines = ["| request | answer |", "|---|---|"]
    for route in self where route.needsToken {
      let takes = route.takes.isEmpty ? "" : (route.method == .get ? route.takes : " " + route.takes)
      lines.append("| `\(route.method.rawValue) \(route.path)\(takes)` | \(route.answers) |")
    }
    return lines.joined(separator: "\n") + "\n"
  }
}
