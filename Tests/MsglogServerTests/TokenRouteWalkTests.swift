import Foundation
import Msglog
import MsglogServer
import MsglogTestSupport
import Testing

/// Every route of the server's own table, walked with named tokens (SPEC
/// "Scopes hold on every route"): each is allowed or refused exactly as
/// its declared `Permission` says, so that no side route skips the check
/// — and a route that needs a token but declares no permission fails
/// here, so a new route cannot forget it.
@Suite struct TokenRouteWalkTests {
  let directory = TemporaryDirectory()
  let log: EventLog
  let server: HTTPServer
  /// Reads team/*; writes nothing.
  let reader: String
  /// Writes other/*: nothing of team/board.
  let other: String
  /// Reads and writes every stream, erases none.
  let writer: String

  init() throws {
    log = try EventLog(directory.db)
    try log.append("hello", to: "team/board")
    reader = try log.addToken(named: "ro", scopes: TokenScopes(read: [.under("team/")])).secret.token
    other = try log.addToken(named: "elsewhere", scopes: TokenScopes(write: [.under("other/")])).secret.token
    writer = try log.addToken(named: "all", scopes: TokenScopes(write: [.every])).secret.token
    server = try HTTPServer(log: log, configuration: ServerConfiguration(listen: ListenAddress(parsing: "127.0.0.1:0")))
  }

  func respond(_ route: Route, token: String?) throws -> Response {
    var headers = [("Host", "127.0.0.1:8080")]
    if let token { headers.append(("Authorization", "Bearer " + token)) }
    var target = route.path
    var body: [UInt8] = []
    if route.method == .post {
      headers.append(("Content-Type", "application/json"))
      body = Array(#"{"stream":"team/board","text":"x"}"#.utf8)
    } else if route.parameters.contains("stream") {
      target += "?stream=team%2Fboard"
    }
    let request = try Request(method: route.method.rawValue, target: target, headers: headers, body: body)
    return server.router.respond(to: request)
  }

  /// Whether `scopes` give what `permission` asks, for a request about team/board.
  func allows(_ permission: Permission?, _ scopes: TokenScopes) -> Bool {
    switch permission {
    case nil: return false
    case .anyToken: return true
    case .everyStream: return scopes.allowsEveryStream(.read)
    case .stream(let right, _): return scopes.allows(right, on: "team/board")
    }
  }

  @Test func everyRouteIsAllowedOrRefusedByItsDeclaredPermission() throws {
    let routes = server.router.routes.filter(\.needsToken)
    #expect(routes.count >= 15)
    let tokens: [(String, TokenScopes)] = [
      (reader, TokenScopes(read: [.under("team/")])), (other, TokenScopes(write: [.under("other/")])),
      (writer, TokenScopes(write: [.every])),
    ]
    for route in routes {
      #expect(route.permission != nil, "\(route.method.rawValue) \(route.path) declares no permission")
      // Without a token, or with a wrong one: the one 401.
      for token in [nil, "msglog_0123456789abcdef_" + String(repeating: "0", count: 64)] {
        let refused = try respond(route, token: token)
        #expect(refused.status == 401, "\(route.path) without a valid token")
        #expect(String(decoding: refused.bodyBytes ?? [], as: UTF8.self) == #"{"error":"a valid token is needed"}"#)
      }
      for (token, scopes) in tokens {
        let response = try respond(route, token: token)
        let text = String(decoding: response.bodyBytes ?? [], as: UTF8.self)
        let refusedByScope = response.status == 403 && text.contains(" may not ")
        if allows(route.permission, scopes) {
          #expect(!refusedByScope && response.status != 401, "\(route.path) for \(scopes): \(response.status) \(text)")
        } else {
          #expect(refusedByScope, "\(route.path) for \(scopes): \(response.status) \(text)")
        }
      }
    }
    // Only the writer's append went through: the refused did nothing.
    #expect(try log.items(of: "team/board").items.map(\.sender) == [nil, "all"])
  }

  /// Without `stream`, the events and the streams a token sees are only
  /// those it may read.
  @Test func unfilteredReadsShowOnlyReadableStreams() throws {
    try log.append("pay rise", to: "hr/pay")
    let streams = server.router.routes.first { $0.path == "/api/streams" }!
    let events = server.router.routes.first { $0.path == "/api/events" }!
    var request = try Request(
      method: "GET", target: "/api/events", headers: [("Host", "127.0.0.1"), ("Authorization", "Bearer " + reader)])
    var text = String(decoding: server.router.respond(to: request).bodyBytes ?? [], as: UTF8.self)
    #expect(text.contains("team/board") && !text.contains("hr/pay") && !text.contains("pay rise"), "\(text)")
    request = try Request(
      method: "GET", target: streams.path, headers: [("Host", "127.0.0.1"), ("Authorization", "Bearer " + reader)])
    text = String(decoding: server.router.respond(to: request).bodyBytes ?? [], as: UTF8.self)
    #expect(text.contains("team/board") && !text.contains("hr/pay"), "\(text)")
    request = try Request(
      method: "GET", target: events.path, headers: [("Host", "127.0.0.1"), ("Authorization", "Bearer " + writer)])
    text = String(decoding: server.router.respond(to: request).bodyBytes ?? [], as: UTF8.self)
    #expect(text.contains("team/board") && text.contains("hr/pay"), "\(text)")
  }
}
