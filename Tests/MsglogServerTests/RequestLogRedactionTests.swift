import Testing

@testable import MsglogServer

/// The request log's target never holds a token: the value of a query
/// parameter whose name holds `token` is left out, and a named token's
/// secret anywhere in the target is written as `redacted`, its id kept.
@Suite struct RequestLogRedactionTests {
  static let id = "1b4e0c9f2a3d4e5f"
  static let secret = String(repeating: "0123456789abcdef", count: 4)
  static let named = "msglog_\(id)_\(secret)"

  @Test(arguments: [
    ("/api/items?stream=main&token=abc", "/api/items?stream=main&token="),
    ("/api/streams?access_token=op-secret&x=1", "/api/streams?access_token=&x=1"),
    ("/api/streams?Token=a&%74oken=b&TOKEN=c", "/api/streams?Token=&%74oken=&TOKEN="),
    ("/api/streams?token%00=a&token[]=b&api+token=c", "/api/streams?token%00=&token[]=&api+token="),
    ("/api/\(named)", "/api/msglog_\(id)_redacted"),
    ("/api/items?stream=\(named)&from=1", "/api/items?stream=msglog_\(id)_redacted&from=1"),
    ("/\(named)\(named)", "/msglog_\(id)_redactedmsglog_\(id)_redacted"),
    ("/api/items?stream=main&token", "/api/items?stream=main&token"),
    ("/api/msglog%5F\(id)%5f\(secret)", "/api/msglog%5F\(id)%5fredacted"),
    ("/api/MSGLOG_\(id.uppercased())_\(secret.uppercased())", "/api/MSGLOG_\(id.uppercased())_redacted"),
  ])
  func tokensAreLeftOut(target: String, logged: String) {
    #expect(RequestLog.redacting(target) == logged)
  }

  /// The operator's token (`--token`), wherever the target holds it.
  @Test func theOperatorsTokenIsLeftOut() {
    let token = "operator-token-0123456789"
    #expect(RequestLog.redacting("/api/\(token)/x?a=\(token)", operatorToken: token) == "/api/redacted/x?a=redacted")
    #expect(RequestLog.redacting("/api/items?a=b", operatorToken: token) == "/api/items?a=b")
  }

  /// What only looks like a token stays as it is: a secret a digit short,
  /// a non-hex digit, the id a digit short; and a target with no query.
  @Test(arguments: [
    "/api/msglog_\(id)_\(secret.dropLast())",
    "/api/msglog_\(id)_\(secret.dropLast())g",
    "/api/msglog_\(id.dropLast())_\(secret)",
    "/api/items?stream=msglog_&from=2",
    "/api/items",
  ])
  func whatIsNoTokenStays(target: String) {
    #expect(RequestLog.redacting(target) == target)
  }
}
