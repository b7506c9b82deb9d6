import Foundation
import Msglog
import MsglogServer
import MsglogTestSupport
import MsglogWire
import Testing

/// The routes in process: a `Request` value in, a `Response` out, through
/// the same router and route table the server uses, on a real LMDB log.
@Suite struct RouterTests {
  let directory = TemporaryDirectory()
  let log: EventLog
  let server: HTTPServer

  init() throws {
    log = try EventLog(directory.db)
    server = try HTTPServer(log: log, configuration: ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:0")))
  }

  func respond(
    _ method: String, _ target: String, headers: [(String, String)] = [("Host", "127.0.0.1:8080")], body: String? = nil
  ) throws -> Response {
    var headers = headers
    if body != nil { headers.append(("Content-Type", "application/json")) }
    let request = try Request(method: method, target: target, headers: headers, body: Array((body ?? "").utf8))
    return server.router.respond(to: request)
  }

  func text(_ response: Response) -> String { String(decoding: response.bodyBytes ?? [], as: UTF8.self) }

  @Test func theAPIAnswersInTheWireShapes() throws {
    try log.append("first", sender: "ann")
    var response = try respond("POST", "/api/append", body: #"{"text":"second"}"#)
    #expect(response.status == 200 && text(response).contains(#""version":2,"#), "\(text(response))")
    response = try respond("GET", "/api/items?stream=main")
    var expected = JSONWriter()
    expected.snapshot(try log.items())
    expected.raw("\n")
    #expect(response.status == 200 && response.bodyBytes == expected.take())
    response = try respond("GET", "/api/events?from=2")
    var events = JSONWriter()
    for event in try log.events(from: 2) {
      events.event(event)
      events.raw("\n")
    }
    #expect(response.contentType == "application/x-ndjson" && response.bodyBytes == events.take())
    response = try respond("POST", "/api/move", body: #"{"from":1,"to":1}"#)
    #expect(text(response) == #"{"moved":false}"#)
  }

  /// Working together over the API: edit, restore, undo and redo, and a
  /// stale drag that is rebased instead of refused (412 without `rebase`);
  /// the answers are the `--json` shapes, statuses the library's categories.
  @Test func editRestoreUndoAndRebase() throws {
    let ids = try ["A", "B", "C"].map { try log.append($0).event.id.text }
    var response = try respond("POST", "/api/edit", body: #"{"id":"\#(ids[0])","text":"A!","sender":"bob"}"#)
    #expect(response.status == 200 && text(response).contains(#""id":"\#(ids[0])","index":0}"#), "\(text(response))")
    response = try respond("POST", "/api/edit", body: #"{"id":"\#(ids[0])","text":"A!"}"#)
    #expect(response.status == 200 && text(response) == #"{"edited":false}"#, "\(text(response))")
    response = try respond("POST", "/api/remove", body: #"{"id":"\#(ids[1])"}"#)
    #expect(response.status == 200)
    response = try respond("POST", "/api/restore", body: #"{"id":"\#(ids[1])"}"#)
    #expect(response.status == 200 && text(response).contains(#""index":1}"#), "\(text(response))")
    response = try respond("POST", "/api/restore", body: #"{"id":"\#(ids[1])"}"#)
    #expect(response.status == 409 && text(response).contains("is live"), "\(text(response))")
    response = try respond("POST", "/api/undo", body: #"{}"#)
    #expect(response.status == 200 && text(response).contains(#""index":1,"undoes":6}"#), "\(text(response))")
    response = try respond("POST", "/api/undo", body: #"{"seq":7}"#)
    #expect(response.status == 200 && text(response).contains(#""undoes":7}"#), "\(text(response))")
    response = try respond("POST", "/api/undo", body: #"{"seq":7}"#)
    #expect(
      response.status == 409 && text(response) == #"{"error":"event 7 is already undone (by event 8)"}"#,
      "\(text(response))")
    response = try respond("POST", "/api/undo", body: #"{"seq":99}"#)
    #expect(response.status == 404, "\(text(response))")
    // Two drags on the board at version 8: the second is stale.
    #expect(try respond("POST", "/api/move", body: #"{"from":2,"to":0,"expectVersion":8,"rebase":true}"#).status == 200)
    response = try respond("POST", "/api/move", body: #"{"from":0,"to":1,"expectVersion":8}"#)
    #expect(response.status == 412, "\(text(response))")
    // A! was to follow B: B is at the end now, and so A! goes after it.
    response = try respond("POST", "/api/move", body: #"{"from":0,"to":1,"expectVersion":8,"rebase":true}"#)
    #expect(
      response.status == 200 && text(response).contains(#""from":1,"to":2,"rebased":true}"#), "\(text(response))")
    response = try respond("POST", "/api/move", body: #"{"from":0,"to":2,"rebase":true}"#)
    #expect(
      response.status == 400
        && text(response)
          == #"{"error":"\"rebase\" needs \"expectVersion\": the version the command was made at"}"#,
      "\(text(response))")
    response = try respond("POST", "/api/restore", body: #"{"id":"\#(ids[1])","rebase":true}"#)
    #expect(
      response.status == 400 && text(response) == #"{"error":"a restore takes no \"rebase\""}"#, "\(text(response))")
    response = try respond("POST", "/api/undo", body: #"{"seq":"7"}"#)
    #expect(response.status == 400, "\(text(response))")
    #expect(try log.items().items.map(\.text) == ["C", "B", "A!"])
    #expect(try log.verify().isClean)
  }

  /// 404 for a path no route has, 405 with the path's methods in `Allow`.
  @Test func unknownPathsAndMethods() throws {
    var response = try respond("GET", "/api/nothing")
    #expect(response.status == 404 && text(response) == #"{"error":"no such route: /api/nothing"}"#)
    response = try respond("DELETE", "/api/streams")
    #expect(response.status == 405 && response.header("Allow") == "GET, HEAD", "\(response.headers)")
    response = try respond("GET", "/api/append")
    #expect(response.status == 405 && response.header("Allow") == "POST")
  }

  /// HEAD wherever GET: the same status and headers.
  @Test func headWhereverGet() throws {
    try log.append("x")
    for route in server.router.routes where route.method == .get && route.path != "/api/follow" {
      let queries = [
        "/api/diff": "?from=0&to=1", "/api/sync": "?protocol=1",
        "/api/sync/pull": "?log=" + (try log.syncHello().log?.text ?? ""),
        "/api/sync/bases": "?log=" + (try log.syncHello().log?.text ?? ""),
      ]
      let target = route.path + (queries[route.path] ?? "")
      let get = try respond("GET", target)
      let head = try respond("HEAD", target)
      #expect(head.status == get.status && get.status == 200, "\(route.path): \(head.status) \(get.status)")
      #expect(head.contentType == get.contentType)
    }
  }

  @Test func aTokenGuardsTheAPIButNotThePage() throws {
    try log.append("x")
    let guarded = try HTTPServer(
      log: log,
      configuration: ServerConfiguration(
        listen: ListenAddress(parsing: "10.0.0.1:0"), token: "0123456789abcdef0123"))
    func status(_ target: String, _ headers: [(String, String)]) throws -> UInt32 {
      guarded.router.respond(to: try Request(method: "GET", target: target, headers: [("Host", "10.0.0.1")] + headers))
        .status
    }
    #expect(try status("/api/streams", []) == 401)
    #expect(try status("/api/streams", [("Authorization", "Bearer 0123456789abcdef0123")]) == 200)
    #expect(try status("/api/streams", [("Authorization", "Bearer 0123456789abcdef012")]) == 401)
    #expect(try status("/", []) == 200)
  }

  /// The page's files carry an ETag; the same ETag back gets a 304.
  @Test func thePageRevalidates() throws {
    for path in ["/", "/app.js", "/app.css"] {
      let first = try respond("GET", path)
      let etag = try #require(first.header("ETag"))
      #expect(first.status == 200 && !(first.bodyBytes ?? []).isEmpty)
      let again = try respond("GET", path, headers: [("Host", "127.0.0.1:8080"), ("If-None-Match", etag)])
      #expect(again.status == 304 && again.bodyBytes == [] && again.header("ETag") == etag)
      let other = try respond("GET", path, headers: [("Host", "127.0.0.1:8080"), ("If-None-Match", "\"0\"")])
      #expect(other.status == 200)
    }
  }

  /// The targets are decoded strictly: what a proxy might read otherwise is a 400.
  @Test(arguments: [
    "/api%2fitems", "/api%2Fitems", "/api/items%00.json", "/api/items?stream=main%00evil", "/api/items?stream=%zz",
    "/api/items?stream=a&stream=b", "/api/items?stream=%FF", "api/items",
  ])
  func targetsThatAreNotGuessed(_ target: String) {
    #expect(throws: HTTPError.self) { try Request(method: "GET", target: target) }
  }

  @Test func targetsDecode() throws {
    let request = try Request(method: "GET", target: "/api/items?stream=a+b%2Fc&at=3&flag")
    #expect(request.path == "/api/items")
    #expect(request.query == ["stream": "a b/c", "at": "3", "flag": ""])
  }

  /// docs/REFERENCE.md's route list is the route table's.
  @Test func theReferenceListsTheRouteTable() throws {
    let reference = try String(contentsOfFile: repositoryRoot + "/docs/REFERENCE.md", encoding: .utf8)
    #expect(reference.contains(server.router.routes.markdownTable), "\(server.router.routes.markdownTable)")
  }

  /// docs/SERVER.md's list of routes and the man page (from `serve`'s
  /// declaration) name every route of the table, and neither they nor the
  /// README name any other.
  @Test func theServerGuideAndTheManualNameEveryRoute() throws {
    let guide = try String(contentsOfFile: repositoryRoot + "/docs/SERVER.md", encoding: .utf8)
    let readme = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
    let manual = try String(contentsOfFile: repositoryRoot + "/docs/msglog.1", encoding: .utf8)
    for route in server.router.routes where route.needsToken {
      #expect(
        guide.contains("`\(route.method.rawValue) \(route.path)"), "docs/SERVER.md lacks \(route.method) \(route.path)")
      #expect(manual.contains(route.path), "the man page lacks \(route.path)")
    }
    let paths = Set(server.router.routes.map(\.path))
    for (name, text) in [("docs/SERVER.md", guide), ("README", readme)] {
      for match in text.matches(of: /`(?:GET|POST) (\/api\/[a-z]+(?:\.json)?)/) {
        #expect(paths.contains(String(match.1)), "\(name) names \(match.1), which no route has")
      }
    }
  }
}

/// /api/openapi.json is the route table: every route's path and method,
/// its query parameters and header fields (names, whether required), a
/// write's body members (from the write declaration) with `additionalProperties`
/// false, every status it may answer, and the token where it needs one.
@Suite struct OpenAPITests {
  let directory = TemporaryDirectory()
  let server: HTTPServer

  init() throws {
    server = try HTTPServer(
      log: try EventLog(directory.db), configuration: ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:0"))
    )
  }

  @Test func theDocumentIsTheRouteTable() throws {
    let request = try Request(method: "GET", target: "/api/openapi.json", headers: [("Host", "127.0.0.1:8080")])
    let response = server.router.respond(to: request)
    #expect(response.status == 200)
    let document = try #require(
      try JSONSerialization.jsonObject(with: Data(response.bodyBytes ?? [])) as? [String: Any])
    #expect(document["openapi"] as? String == "3.1.0")
    let paths = try #require(document["paths"] as? [String: [String: Any]])
    let routes = server.router.routes
    #expect(Set(paths.keys) == Set(routes.map(\.path)))
    for path in ["/livez", "/readyz", "/metrics", "/api/openapi.json", "/api/follow", "/api/undo"] {
      #expect(paths[path] != nil, "\(path)")
    }
    for route in routes {
      let operation = try #require(
        paths[route.path]?[route.method.rawValue.lowercased()] as? [String: Any], "\(route.path)")
      #expect(paths[route.path]?.count == routes.filter { $0.path == route.path }.count)
      let parameters = operation["parameters"] as? [[String: Any]] ?? []
      func named(_ place: String) -> [String] {
        parameters.filter { $0["in"] as? String == place }.map { $0["name"] as! String }
      }
      #expect(named("query") == route.query.map(\.name), "\(route.path)")
      #expect(named("header") == route.headerFields.map(\.name), "\(route.path)")
      for parameter in parameters {
        let field = (route.query + route.headerFields).first { $0.name == parameter["name"] as? String }
        #expect(parameter["required"] as? Bool == field?.required, "\(route.path) \(parameter)")
      }
      let schema =
        ((operation["requestBody"] as? [String: Any])?["content"] as? [String: Any])?["application/json"]
        as? [String: Any]
      if let body = route.body {
        let object = try #require(schema?["schema"] as? [String: Any], "\(route.path)")
        let properties = try #require(object["properties"] as? [String: Any])
        #expect(Set(properties.keys) == Set(body.map(\.name)), "\(route.path)")
        #expect(Set(object["required"] as? [String] ?? []) == Set(body.filter(\.required).map(\.name)), "\(route.path)")
        #expect(object["additionalProperties"] as? Bool == false)
      } else {
        #expect(operation["requestBody"] == nil, "\(route.path)")
      }
      let responses = try #require(operation["responses"] as? [String: Any])
      #expect(Set(responses.keys) == Set(route.statuses.map(String.init)), "\(route.path)")
      #expect(route.statuses.contains(route.success.status))
      let security = operation["security"] as? [Any] ?? []
      #expect(security.isEmpty == !route.needsToken, "\(route.path)")
    }
    // Health checks are for probers without a token; the metrics are not.
    let byPath = Dictionary(routes.map { ($0.path, $0) }, uniquingKeysWith: { first, _ in first })
    #expect(byPath["/livez"]?.needsToken == false && byPath["/readyz"]?.needsToken == false)
    #expect(byPath["/metrics"]?.needsToken == true && byPath["/api/openapi.json"]?.needsToken == true)
    // A write route's body is its operation's declared members, the stream and the version.
    // (An erase's route takes many ids or a sender: `Routes+Erase`; its
    // declared member is an import line's. An unsign has no route: only
    // `erase --sender` makes one, and an import line names one.)
    for operation in WriteOperation.allCases where operation != .erase && operation != .unsign {
      var members = ["stream"] + operation.declaration.fields.map(\.member.name) + ["expectVersion"]
      if operation.rebases { members.append("rebase") }
      #expect(byPath["/api/" + operation.name]?.body?.map(\.name) == members, "\(operation)")
    }
  }

  /// A route declared in prose (`takes:`, `answers:`) still declares what
  /// the router checks and the document says: its parameters or members
  /// by name (of any type, none required), a JSON object with 200, and the
  /// refusals it names.
  @Test func aRouteDeclaredInProse() throws {
    let answer = Response(contentType: "application/json", body: .bytes(Array("{}".utf8)))
    let get = Route(
      .get, "/api/sync", needsToken: true, takes: "?from=SEQ&limit=N", answers: "changes", refusals: [409]
    ) {
      _ in answer
    }
    #expect(get.query.map(\.name) == ["from", "limit"] && get.parameters == ["from", "limit"])
    #expect(get.takes == "?from=SEQ&limit=N" && get.body == nil && get.answers == "changes")
    #expect(get.statuses == [200, 400, 401, 403, 409, 503])
    let post = Route(.post, "/api/sync", needsToken: true, takes: #"{"origin","changes"}"#, answers: "applied") { _ in
      answer
    }
    #expect(post.body?.map(\.name) == ["origin", "changes"] && post.query.isEmpty)
    #expect(post.takes == #"{"origin","changes"}"# && post.statuses == [200, 400, 401, 403, 413, 503])
    #expect(post.body?.allSatisfy { $0.kind == .any && !$0.required } == true)
  }
}
