import Foundation
import MsglogTestSupport
import Testing

/// docs/SERVER.md's reverse proxy as written (issue 35.1 and 35.4): nginx
/// ending TLS in front of `msglog serve --public-origin … --trusted-proxy
/// 127.0.0.1`, both from the document's own blocks (`DocumentedProxy`).
/// Writes from the page's public origin go through, a foreign origin's are
/// refused, and the request log names the client nginx saw, which is
/// 127.0.0.3 here (`curl --interface`), never what a client wrote in
/// `X-Forwarded-For` itself. The page itself writing through it, in
/// headless Chromium, is BrowserTests' `thePageWritesThroughTheDocumentedProxy`.
@Suite(.serialized) struct ProxyTests {
  /// The client's own address: another loopback address than the proxy's.
  static let client = "127.0.0.3"

  @Test func aWriteFromThePublicOriginGoesThroughTheDocumentedNginx() throws {
    let s = Sandbox()
    let proxy = try DocumentedProxy(s)
    var stopped = false
    defer { if !stopped { _ = proxy.stop() } }
    let curl = proxy.curl + ["--interface", Self.client]
    func append(_ text: String, origin: String, _ extra: [String] = []) -> Operations.Exchange {
      Operations.curl(
        proxy.origin + "/api/append",
        curl + extra + [
          "-H", "Origin: \(origin)", "-H", "Content-Type: application/json", "--data-binary", #"{"text":"\#(text)"}"#,
        ], in: s.dir)
    }

    var r = append("from the page", origin: proxy.origin)
    #expect(r.status == 200, "the page's own origin, through nginx: \(r)")
    // Another origin, and the page's origin with the scheme the proxy speaks to serve.
    for foreign in ["https://evil.example.net", "http://\(DocumentedProxy.host):\(proxy.https)"] {
      r = append("from \(foreign)", origin: foreign)
      #expect(r.status == 403 && r.body.contains("writes from the origin"), "\(foreign): \(r)")
    }
    // What a client writes in X-Forwarded-For itself is never its address.
    r = append("spoofed", origin: proxy.origin, ["-H", "X-Forwarded-For: 203.0.113.7"])
    #expect(r.status == 200, "\(r)")
    // Nor from a client on the proxy's own host, whose address is the
    // trusted one (an appended header, `$proxy_add_x_forwarded_for`, let
    // its own words through: a tester's request was logged as 6.6.6.6).
    let local = Operations.curl(
      proxy.origin + "/api/items", proxy.curl + ["--interface", "127.0.0.1", "-H", "X-Forwarded-For: 203.0.113.9"],
      in: s.dir)
    #expect(local.status == 200, "\(local)")
    // Nor is it from a peer that is no trusted proxy (straight to serve).
    let direct = Operations.curl(
      proxy.server.url! + "/api/items", ["--interface", Self.client, "-H", "X-Forwarded-For: 203.0.113.8"], in: s.dir)
    #expect(direct.status == 200, "\(direct)")

    let items = proxy.server.request("GET", "/api/items")
    #expect(items.body.contains("from the page") && items.body.contains("spoofed"), "\(items)")
    #expect(!items.body.contains("evil"), "\(items)")

    stopped = true
    let run = proxy.stop()
    #expect(run.code == 0, "\(run)")
    let lines = run.stderr.split(separator: "\n")
    let appends = lines.filter { $0.contains(" POST /api/append ") }
    #expect(appends.count == 4, "\(run.stderr)")
    // Each with the client nginx saw and the request id nginx made.
    for line in appends {
      let words = line.split(separator: " ")
      #expect(words.count > 3 && words[2] == Self.client && words[1].count == 32, "\(line)")
    }
    #expect(lines.contains { $0.contains(" \(Self.client) - GET /api/items 200 ") }, "\(run.stderr)")
    #expect(lines.contains { $0.contains(" 127.0.0.1 - GET /api/items 200 ") }, "\(run.stderr)")
    #expect(!run.stderr.contains("203.0.113"), "\(run.stderr)")
  }

  /// The document's block and command, as the test reads them: a change to
  /// either that the test does not follow stops it here.
  @Test func theDocumentNamesBothFlags() {
    let blocks = DocumentBlock.marked("proxy", in: DocumentedProxy.document)
    #expect(blocks.count == 2, "\(blocks)")
    let command = blocks.last?.text ?? ""
    #expect(command.contains("--public-origin https://") && command.contains("--trusted-proxy 127.0.0.1"), "\(command)")
    let nginx = blocks.first?.text ?? ""
    #expect(nginx.contains("X-Forwarded-For $remote_addr;") && nginx.contains("listen 443 ssl"), "\(nginx)")
  }
}
