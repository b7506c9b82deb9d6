/// One route: a method and a path, whether it needs the token, what it
/// takes and answers — as facts: each query parameter and body member with
/// its type, each answer with its status and content type — and its handler.
///
/// Routes are declared once, in a table (`Routes.table`), from which the
/// router dispatches, answers 404 and 405 (with `Allow`), serves `HEAD`
/// wherever `GET` is served, refuses unknown parameters, and the
/// documentation is written: docs/REFERENCE.md's route list and the
/// OpenAPI document at `/api/openapi.json` (`OpenAPI`), so neither can
/// drift from what the server does. hummingbird's router, as a table.
package struct Route: Sendable {
  package enum Method: String, Sendable {
    case get = "GET"
    case post = "POST"
  }

  package var method: Method
  package var path: String
  /// Every `/api/` route does when a token is set (and `/metrics`); the
  /// page's files and the health checks do not (a browser cannot attach a
  /// token to a navigation, a prober has none, and they hold no data).
  package var needsToken: Bool
  /// What a named token needs for it (`Permission`); nil: no named token
  /// may use it (a route that forgot to say is closed, not open).
  package var permission: Permission?
  /// Its query parameters, in the order the documentation shows them.
  package var query: [Field]
  /// Header fields it reads (`Last-Event-ID`).
  package var headerFields: [Field]
  /// A write's JSON body: its members (every other is refused, 400).
  package var body: [Field]?
  /// What it answers when it succeeds.
  package var success: Answer
  /// The refusals it may answer besides those every route may (`Answer.common`).
  package var refusals: [UInt32]
  /// What it answers, in a line of docs/REFERENCE.md's table.
  package var answers: String
  /// The query parameters it reads; any other is refused (400), as an
  /// unknown member of a body is: a typo must not be ignored.
  package var parameters: Set<String>
  package var handler: @Sendable (Request) throws -> Response
  /// A write's handler that answers later, from the thread that commits
  /// its batch (`Route+Deferred`); `handler` is then this one, waited for.
  package var deferred: (@Sendable (Request, Deferral) throws -> Void)?

  /// A query parameter, header field or body member, and its value's type.
  package struct Field: Sendable, Equatable {
    package enum Kind: String, Sendable, Equatable {
      case string
      /// A string of one character or more (a message's text, a sender).
      case text
      /// 0 to 2^63-1, as the command line takes numbers.
      case integer
      case boolean
      /// A UUID (`xxxxxxxx-xxxx-…`).
      case uuid
      /// A UUID or a prefix of 8 or more of its hex digits.
      case selector
      /// Anything (a route declared in prose, `takes:`).
      case any
    }

    package var name: String
    package var kind: Kind
    /// `S`, `SEQ`, `N`: how docs/REFERENCE.md writes its value.
    package var placeholder: String
    package var required: Bool
    package var description: String
    /// The smallest and largest values an integer takes, when narrower than 0…2^63-1.
    package var range: ClosedRange<UInt64>?

    /// A body member (no placeholder: the docs show only its name).
    package init(_ name: String, _ kind: Kind, required: Bool = false, _ description: String) {
      self.init(name, kind, "", required: required, description)
    }

    package init(
      _ name: String, _ kind: Kind, _ placeholder: String, required: Bool = false, range: ClosedRange<UInt64>? = nil,
      _ description: String
    ) {
      self.name = name
      self.kind = kind
      self.placeholder = placeholder
      self.required = required
      self.range = range
      self.description = description
    }
  }

  /// An answer: its status, what it is, and the shape of its body.
  package struct Answer: Sendable, Equatable {
    package enum Shape: String, Sendable, Equatable {
      /// One JSON object.
      case object
      /// `{"error":"…"}`.
      case error
      /// Text of the content type (the page's files, NDJSON).
      case text
      /// Server-Sent Events: each event's `id`, `event` and `data` fields.
      case events
    }

    package var status: UInt32
    package var description: String
    package var contentType: String
    package var shape: Shape

    /// A JSON object with 200.
    package init(_ description: String) { self.init(200, "application/json", .object, description) }

    package init(_ status: UInt32, _ contentType: String, _ shape: Shape, _ description: String) {
      self.status = status
      self.contentType = contentType
      self.shape = shape
      self.description = description
    }
  }

  /// A route declared with its facts.
  package init(
    _ method: Method, _ path: String, needsToken: Bool, permission: Permission? = nil, query: [Field] = [],
    headerFields: [Field] = [], body: [Field]? = nil, success: Answer, refusals: [UInt32] = [], answers: String? = nil,
    handler: @escaping @Sendable (Request) throws -> Response
  ) {
    self.method = method
    self.path = path
    self.needsToken = needsToken
    self.permission = permission
    self.query = query
    self.headerFields = headerFields
    self.body = body
    self.success = success
    self.refusals = refusals
    self.answers = answers ?? success.description
    self.handler = handler
    parameters = Set(query.map(\.name))
  }

  /// A route declared in prose: `takes` is `?a=A&b=B` (query parameters,
  /// for a GET) or `{"a","b"}` (body members, for a POST), each of any type
  /// and none required; it answers a JSON object with 200, or one of
  /// `refusals` besides the statuses every route may answer (`statuses`).
  /// The initializer with facts (`query:`, `body:`, `success:`) says more.
  package init(
    _ method: Method, _ path: String, needsToken: Bool, permission: Permission? = nil, takes: String = "",
    answers: String, refusals: [UInt32] = [], handler: @escaping @Sendable (Request) throws -> Response
  ) {
    let names = Self.names(in: takes)
    let fields = names.map { Field($0.name, .any, $0.placeholder, "") }
    self.init(
      method, path, needsToken: needsToken, permission: permission, query: method == .get ? fields : [],
      body: method == .post ? fields : nil, success: Answer(answers), refusals: refusals, answers: answers,
      handler: handler)
  }

  /// The names (and placeholders) in a `takes` of the form `?a=A&b=B` or `{"a","b"}`.
  static func names(in takes: String) -> [(name: String, placeholder: String)] {
    if takes.hasPrefix("?") {
      return takes.dropFirst().split(separator: "&").map { pair in
        (String(pair.prefix { $0 != "=" }), String(pair.drop { $0 != "=" }.dropFirst()))
      }
    }
    if takes.hasPrefix("{") {
      return takes.dropFirst().dropLast().split(separator: ",").map { (String($0.dropFirst().dropLast()), "") }
    }
    return []
  }

  /// What it takes, as docs/REFERENCE.md writes it: `?stream=S&at=SEQ`, `{"stream","text"}`.
  package var takes: String {
    if let body { return "{" + body.map { "\"\($0.name)\"" }.joined(separator: ",") + "}" }
    guard !query.isEmpty else { return "" }
    return "?" + query.map { "\($0.name)=\($0.placeholder)" }.joined(separator: "&")
  }

  /// The methods it answers: `HEAD` wherever `GET`.
  var methods: [String] { method == .get ? ["GET", "HEAD"] : [method.rawValue] }

  /// Every status it may answer, its success first: what any request may
  /// be refused with (400 a malformed request, 403 a foreign `Host`, 503 the
  /// server out of a resource or the store unreachable), the token's 401,
  /// a write's 403 (a foreign origin), 413 and 415, then its own.
  package var statuses: [UInt32] {
    var all: [UInt32] = [success.status, 400]
    if needsToken { all.append(401) }
    all.append(403)
    if method == .post { all += [413] }
    all += refusals
    all.append(503)
    var seen = Set<UInt32>()
    return all.filter { seen.insert($0).inserted }
  }
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
