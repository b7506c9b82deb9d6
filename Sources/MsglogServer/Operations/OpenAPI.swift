import Msglog
import MsglogWire
import Synchronization

/// `GET /api/openapi.json`: the route table as an OpenAPI 3.1 document —
/// every route with its parameters, body members and answers (each status
/// it may give, its content type and shape) — made from the same values
/// the router dispatches by, so the document cannot drift from the server.
enum OpenAPI {
  static func document(_ routes: [Route]) -> [UInt8] {
    var paths: [(String, JSONValue)] = []
    for path in routes.map(\.path).uniqued() {
      let operations = routes.filter { $0.path == path }.map { route in
        (route.method.rawValue.lowercased(), operation(route))
      }
      paths.append((path, .object(operations)))
    }
    let errorSchema: JSONValue = .object([
      ("type", "object"), ("required", .array(["error"])),
      ("properties", .object([("error", .object([("type", "string")]))])),
    ])
    let document: JSONValue = .object([
      ("openapi", "3.1.0"),
      (
        "info",
        .object([
          ("title", "msglog serve"), ("version", .string(OpenAPI.version)),
          (
            "description",
            .string(
              "The JSON API of msglog serve: the shapes of the command line's --json. "
                + "Every /api/ route needs the bearer token when the server has one.")
          ),
        ])
      ),
      ("paths", .object(paths)),
      (
        "components",
        .object([
          ("schemas", .object([("Error", errorSchema)])),
          ("securitySchemes", .object([("bearer", .object([("type", "http"), ("scheme", "bearer")]))])),
        ])
      ),
    ])
    var bytes: [UInt8] = []
    write(document, into: &bytes)
    bytes.append(UInt8(ascii: "\n"))
    return bytes
  }

  /// The document's version: msglog's own is the command line's, which
  /// this module cannot see; the API's is this.
  static let version = "1"

  private static func operation(_ route: Route) -> JSONValue {
    var members: [(String, JSONValue)] = [
      ("operationId", .string(route.method.rawValue.lowercased() + route.path.operationName)),
      ("summary", .string(route.answers)),
    ]
    let parameters =
      route.query.map { parameter($0, in: "query") } + route.headerFields.map { parameter($0, in: "header") }
    if !parameters.isEmpty { members.append(("parameters", .array(parameters))) }
    if let body = route.body {
      let properties = body.map { ($0.name, schema($0)) }
      var object: [(String, JSONValue)] = [
        ("type", "object"), ("properties", .object(properties)), ("additionalProperties", false),
      ]
      let required = body.filter(\.required).map { JSONValue.string($0.name) }
      if !required.isEmpty { object.append(("required", .array(required))) }
      members.append((
        "requestBody",
        .object([
          ("required", true),
          ("content", .object([("application/json", .object([("schema", .object(object))]))])),
        ])
      ))
    }
    var responses: [(String, JSONValue)] = []
    for status in route.statuses {
      if status == route.success.status {
        responses.append((String(status), answer(route.success)))
      } else {
        responses.append((String(status), answer(Route.Answer(status, "application/json", .error, reason(status)))))
      }
    }
    members.append(("responses", .object(responses)))
    members.append(("security", .array(route.needsToken ? [.object([("bearer", .array([]))]), .object([])] : [])))
    return .object(members)
  }

  private static func parameter(_ field: Route.Field, in place: String) -> JSONValue {
    .object([
      ("name", .string(field.name)), ("in", .string(place)), ("required", .bool(field.required)),
      ("description", .string(field.description)), ("schema", schema(field)),
    ])
  }

  private static func schema(_ field: Route.Field) -> JSONValue {
    var members: [(String, JSONValue)] = []
    switch field.kind {
    case .string: members = [("type", "string")]
    case .text: members = [("type", "string"), ("minLength", .number("1"))]
    case .integer:
      let range = field.range ?? 0...UInt64(Int64.max)
      members = [
        ("type", "integer"), ("minimum", .number(String(range.lowerBound))),
        ("maximum", .number(String(range.upperBound))),
      ]
    case .boolean: members = [("type", "boolean")]
    case .uuid: members = [("type", "string"), ("format", "uuid")]
    case .selector: members = [("type", "string"), ("pattern", "^[0-9a-fA-F-]{8,36}$")]
    case .any: members = []
    }
    if !field.description.isEmpty { members.append(("description", .string(field.description))) }
    return .object(members)
  }

  private static func answer(_ answer: Route.Answer) -> JSONValue {
    var media: [(String, JSONValue)] = []
    switch answer.shape {
    case .object: media = [("schema", .object([("type", "object")]))]
    case .error: media = [("schema", .object([("$ref", "#/components/schemas/Error")]))]
    case .text: media = [("schema", .object([("type", "string")]))]
    case .events:
      // What a client reads of each event (an API tester checks every one).
      let field: JSONValue = .object([("type", "string")])
      media = [
        (
          "schema",
          .object([
            ("type", "object"), ("required", .array(["data"])),
            ("properties", .object([("id", field), ("event", field), ("data", field), ("retry", field)])),
          ])
        )
      ]
    }
    var members: [(String, JSONValue)] = [("description", .string(answer.description))]
    if answer.status != 304 && answer.status != 204 {
      members.append(("content", .object([(answer.contentType, .object(media))])))
    }
    return .object(members)
  }

  private static func reason(_ status: UInt32) -> String {
    switch status {
    case 304: return "not modified: the browser's copy (If-None-Match) is this one"
    case 400: return "a malformed request: a bad parameter, member or value, or framing the server does not guess"
    case 401: return "no token, or the wrong one (the server has one)"
    case 403: return "a Host the server does not answer to, or a write a foreign page could have sent"
    case 404: return "no such stream or item"
    case 409: return "refused: the write does not apply to the list as it is"
    case 410: return "history before the log's horizon was trimmed (msglog trim): reload from the present"
    case 412: return "the stream is not at expectVersion"
    case 413: return "the body is over the limit"
    case 503: return "the server is out of a resource, or the store does not answer; retry"
    default: return ResponseHead.reason(status)
    }
  }

  /// JSON as written: members in their order, strings escaped as `--json` does.
  static func write(_ value: JSONValue, into out: inout [UInt8]) {
    switch value {
    case .null: out += Array("null".utf8)
    case .bool(let flag): out += Array((flag ? "true" : "false").utf8)
    case .number(let text): out += Array(text.utf8)
    case .string(let text): JSONWriter.appendString(text, to: &out)
    case .array(let values):
      out.append(UInt8(ascii: "["))
      for (i, value) in values.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        write(value, into: &out)
      }
      out.append(UInt8(ascii: "]"))
    case .object(let members):
      out.append(UInt8(ascii: "{"))
      for (i, (key, value)) in members.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        JSONWriter.appendString(key, to: &out)
        out.append(UInt8(ascii: ":"))
        write(value, into: &out)
      }
      out.append(UInt8(ascii: "}"))
    }
  }
}

/// The document, made once the table it describes exists (its own route is in it).
final class OpenAPIDocument: Sendable {
  private let stored = Mutex<[UInt8]>([])
  var bytes: [UInt8] { stored.withLock { $0 } }
  func set(_ bytes: [UInt8]) { stored.withLock { $0 = bytes } }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
  public init(stringLiteral value: String) { self = .string(value) }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension String {
  /// `/api/items` → `ApiItems`, for an operation's id.
  fileprivate var operationName: String {
    let words = split(whereSeparator: { !$0.isLetter && !$0.isNumber })
    return words.isEmpty ? "Page" : words.map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
  }
}

extension Sequence where Element: Hashable {
  fileprivate func uniqued() -> [Element] {
    var seen = Set<Element>()
    return filter { seen.insert($0).inserted }
  }
}
