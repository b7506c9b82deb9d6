import Testing

@testable import MsglogServer

/// `--trusted-proxy`'s rules on the forwarding headers, in process: whose
/// word is believed, and which address of a chain is the client's.
@Suite struct TrustedProxyTests {
  static let proxy = "127.0.0.1"
  let proxies = try! TrustedProxies([Self.proxy, "10.0.0.2", "::1"])

  func client(_ peer: String, _ headers: [(String, String)]) -> String {
    TrustedProxies.text(proxies.client(peer: TrustedProxies.address(peer)!, headers: headers))
  }

  @Test func aTrustedProxysLastAddressThatIsNoProxyIsTheClient() {
    #expect(client(Self.proxy, [("X-Forwarded-For", "192.0.2.7")]) == "192.0.2.7")
    // nginx appends its peer: what the client wrote before it is never reached.
    #expect(client(Self.proxy, [("X-Forwarded-For", "203.0.113.9, 192.0.2.7")]) == "192.0.2.7")
    // Two proxies of ours in a row are skipped, and several header lines read in order.
    #expect(client(Self.proxy, [("x-forwarded-for", "203.0.113.9"), ("X-Forwarded-For", "192.0.2.7, 10.0.0.2")]) == "192.0.2.7")
    // Forwarded only without X-Forwarded-For; quoted, with ports, IPv6.
    #expect(client(Self.proxy, [("Forwarded", #"for="[2001:db8::7]:4711";proto=https, for=10.0.0.2"#)]) == "2001:db8::7")
    #expect(client(Self.proxy, [("Forwarded", "for=192.0.2.1"), ("X-Forwarded-For", "192.0.2.7")]) == "192.0.2.7")
    // An entry that is no address ends the walk at the last proxy that spoke.
    #expect(client(Self.proxy, [("X-Forwarded-For", "192.0.2.7, unknown")]) == Self.proxy)
    #expect(client(Self.proxy, []) == Self.proxy)
    // An IPv4-mapped peer is the IPv4 proxy.
    #expect(client("::ffff:127.0.0.1", [("X-Forwarded-For", "192.0.2.7")]) == "192.0.2.7")
  }

  @Test func anyOtherPeerIsItsOwnClient() {
    #expect(client("192.0.2.50", [("X-Forwarded-For", "192.0.2.7")]) == "192.0.2.50")
    #expect(TrustedProxies.none.scheme(peer: [127, 0, 0, 1], headers: [("X-Forwarded-Proto", "https")]) == nil)
    #expect(TrustedProxies.none.client(peer: [127, 0, 0, 1], headers: [("X-Forwarded-For", "192.0.2.7")]) == [127, 0, 0, 1])
  }

  @Test func theSchemeIsTheNearestProxysWord() {
    let peer = TrustedProxies.address(Self.proxy)!
    #expect(proxies.scheme(peer: peer, headers: [("X-Forwarded-Proto", "HTTPS")]) == "https")
    #expect(proxies.scheme(peer: peer, headers: [("X-Forwarded-Proto", "https, http")]) == "http")
    #expect(proxies.scheme(peer: peer, headers: [("Forwarded", "for=192.0.2.7;proto=https")]) == "https")
    #expect(proxies.scheme(peer: peer, headers: [("X-Forwarded-Proto", "gopher")]) == nil)
    #expect(proxies.scheme(peer: [192, 0, 2, 50], headers: [("X-Forwarded-Proto", "https")]) == nil)
  }

  @Test func aProxyIsAnAddress() {
    for text in ["chat.example.org", "127.0.0.1/8", ""] {
      #expect(throws: ServerError.self) { try TrustedProxies([text]) }
    }
  }
}
