import Testing

@testable import MsglogServer

/// The request log's target never holds a token: the value of a query
/// parameter whose name holds `token` is left out, and a named token's
/// secret anywhere in the target is written as `redacted`, its id kept.
@Suite struct RequestLogRedactionTests {
  static let id = "1b4e0c9f2a3d4e5f"
  static let secret = String(repeating: "0123456789abcdef", count: 4)
  static let named = "msglog_\(id)_\(secret)"

  /// Every byte of `text` %-escaped.
  static func escaped(_ text: String) -> String { text.utf8.map { "%" + String($0, radix: 16) }.joined() }

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
    // Any other spelling of a secret: %-encoded whole, after `msglog+`, alone, or more than half of one.
    ("/api/items?stream=" + escaped(named), "/api/items?stream=" + escaped("msglog_\(id)_") + "redacted"),
    ("/api/items?stream=msglog+\(id)_\(secret)", "/api/items?stream=msglog+\(id)_redacted"),
    ("/api/items?stream=\(secret)&from=1", "/api/items?stream=redacted&from=1"),
    ("/api/msglog_\(id)_\(secret.prefix(36))", "/api/msglog_\(id)_redacted"),
    ("/api/msglog_\(id)_\(secret.dropLast())", "/api/msglog_\(id)_redacted"),
    ("/api/x?a=\(secret.prefix(20))%3\(secret.prefix(1))\(secret.prefix(20))", "/api/x?a=redacted"),
  ])
  func tokensAreLeftOut(target: String, logged: String) {
    #expect(RequestLog.redacting(target) == logged)
  }

  /// The operator's token (`--token`), wherever the target holds it, as it was set or %-encoded.
  @Test func theOperatorsTokenIsLeftOut() {
    let token = "operator-token-0123456789"
    #expect(RequestLog.redacting("/api/\(token)/x?a=\(token)", operatorToken: token) == "/api/redacted/x?a=redacted")
    #expect(RequestLog.redacting("/api/items?a=b", operatorToken: token) == "/api/items?a=b")
    #expect(RequestLog.redacting("/api/items?a=operator%2Dtoken-0123456789", operatorToken: token) == "/api/items?redacted")
    #expect(RequestLog.redacting("/api/%6Fperator-token-0123456789?a=1", operatorToken: token) == "redacted")
  }

  /// What only looks like a token stays as it is: a secret of 32 digits
  /// (a UUID without its dashes), a dashed UUID, a non-hex digit in a
  /// secret, and a target with no query.
  @Test(arguments: [
    "/api/msglog_\(id)_\(secret.prefix(32))",
    "/api/items?stream=main&id=\(secret.prefix(32))&from=2",
    "/api/items?log=0123abcd-4567-89ab-cdef-0123456789ab&after=12",
    "/api/msglog_\(id)_\(secret.prefix(30))g\(secret.prefix(30))",
    "/api/items?stream=msglog_&from=2",
    "/api/items",
  ])
  func whatIsNoTokenStays(target: String) {
    #expect(RequestLog.redacting(target) == target)
  }
}
