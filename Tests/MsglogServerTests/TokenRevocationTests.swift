import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

/// A revoked token is out at once, without a restart (SPEC "Revocation
/// needs no restart"): on PostgreSQL through two `serve` nodes of one log
/// (the follow open on one, the next request on the other), on LMDB
/// through one. The open `/api/follow` ends, and nothing committed after
/// the revocation is sent on it.
@Suite(.serialized) struct TokenRevocationTests {
  @Test(arguments: Store.allCases) func aRevokedTokensFollowEndsAndItsNextRequestIsRefused(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("before")
    let added = s.run(["token", "add", "ann", "--read", "*"])
    try #require(added.code == 0, "\(added)")
    let ann = added.stdout.trimmingCharacters(in: .newlines)
    let keeper = s.run(["token", "add", "keeper", "--read", "*"]).stdout.trimmingCharacters(in: .newlines)
    let following = try ServedLog.running(s)
    defer { _ = following.stop() }
    let other = store == .postgres ? try ServedLog.running(s) : following
    defer { if store == .postgres { _ = other.stop() } }
    let socket = try #require(LoopbackSocket(port: following.port))
    // HTTP/1.0: the stream is not chunked, and it ends with the connection.
    #expect(socket.send("GET /api/follow HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ann)\r\n\r\n"))
    var seen = socket.receive(seconds: 30) { $0.contains("retry: 1000") }
    #expect(seen.text.contains(" 200 "), "\(seen.text)")
    s.append("live")
    seen = socket.receive(seconds: 30) { $0.contains("\"live\"") }
    #expect(seen.text.contains("\"live\""), "\(seen.text)")
    #expect(s.run(["token", "revoke", "ann"]).code == 0)
    let revoked = Date()
    s.append("after the revocation")
    let end = socket.receive(seconds: 30) { _ in false }
    let seconds = Date().timeIntervalSince(revoked)
    #expect(end.closed, "the follow did not end: \(end.text)")
    #expect(!end.text.contains("after the revocation"), "\(end.text)")
    // A generous bound for a loaded machine; the bench measures the real figure.
    #expect(seconds < 5, "the follow ended \(seconds) s after the revocation")
    let next = other.request("GET", "/api/streams", headers: ["Authorization: Bearer \(ann)"])
    #expect(next.status == 401, "\(next)")
    let kept = other.request("GET", "/api/streams", headers: ["Authorization: Bearer \(keeper)"])
    #expect(kept.status == 200, "\(kept)")
  }
}
