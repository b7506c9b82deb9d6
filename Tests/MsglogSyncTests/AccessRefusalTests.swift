import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A wrong token and an untrusted certificate are not "offline": each is
/// an error of its own that an app can switch on (sign in again; a trust
/// problem), a clear line and exit 1 on the command line, and the end of a
/// live sync, which no retry could mend. And a token that would cross the
/// network in the clear is warned of.
@Suite(.serialized) struct AccessRefusalTests {
  static let token = "0123456789abcdef0123456789abcdef"

  /// A served log with a token, and a replica cloned with it.
  final class TokenServer {
    let server = Sandbox()
    let served: ServedLog
    let replica = Sandbox()
    let url: String

    init(_ extra: [String] = [], cacert: String? = nil) throws {
      _ = server.append("hello")
      served = try ServedLog.running(server, ["--token", AccessRefusalTests.token] + extra)
      url = try #require(served.url)
      let clone = replica.run(
        ["clone", url] + (cacert.map { ["--cacert", $0] } ?? []),
        environment: ["MSGLOG_TOKEN": AccessRefusalTests.token])
      try #require(clone.code == 0, "\(clone)")
    }

    deinit { _ = served.stop() }
  }

  /// A live sync told to stop once it has waited `times` times (it never
  /// should, for a refusal no retry mends): what it threw, or nil.
  static func liveSync(_ log: EventLog, _ options: SyncOptions, untilItWaited times: Int = 3) -> MsglogError? {
    let stop = Pipe()
    var waits = 0
    do {
      try log.syncLive(
        options: options, stop: [FollowStop(fileDescriptor: stop.fileHandleForReading.fileDescriptor, whenReadable: true)]
      ) { notice in
        guard case .waiting = notice else { return }
        waits += 1
        if waits == times { stop.fileHandleForWriting.write(Data([1])) }
      }
      return nil
    } catch {
      return error as? MsglogError
    }
  }

  @Test func aWrongTokenIsItsOwnErrorAndEndsALiveSync() throws {
    let guarded = try TokenServer()
    _ = guarded.replica.run(["append", "offline"])
    let log = try EventLog(guarded.replica.db)
    let refused = MsglogError.tokenRefused(
      remote: guarded.url, reason: "the bearer token is not valid for this server")
    #expect(throws: refused) { try log.sync(options: SyncOptions(token: "wrong")) }
    #expect(Self.liveSync(log, SyncOptions(token: "wrong")) == refused)
    #expect(refused.category == .forbidden)
    #expect(try log.replicaStatus().pending.count == 1)
  }

  @Test func aWrongTokenOnTheCommandLine() throws {
    let guarded = try TokenServer()
    for args in [["sync"], ["sync", "--follow"]] {
      let child = guarded.replica.start(args, environment: ["MSGLOG_TOKEN": "wrong"])
      let (run, _) = SyncDeadlineTests.finish(child, within: 60)
      #expect(run.code == 1 && run.stdout.isEmpty, "\(args): \(run)")
      #expect(
        run.stderr == """
          msglog: \(guarded.url) refused the token: the bearer token is not valid for this server
          hint: give the remote's token in MSGLOG_TOKEN (or with --token); its operator has it

          """, "\(args): \(run)")
    }
  }

  @Test func anUntrustedCertificateIsItsOwnErrorAndEndsALiveSync() throws {
    let dir = TemporaryDirectory()
    let (cert, key) = (dir.path + "/cert.pem", dir.path + "/key.pem")
    let made = runProgram(
      "/usr/bin/openssl",
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj",
        "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ])
    try #require(made.code == 0, "\(made)")
    let guarded = try TokenServer(["--tls-cert", cert, "--tls-key", key], cacert: cert)
    let log = try EventLog(guarded.replica.db)
    let origin = String(guarded.url.dropFirst("https://".count))
    let untrusted = MsglogError.untrustedRemote(
      remote: guarded.url, reason: "the certificate of \(origin) is not signed by a trusted authority")
    #expect(throws: untrusted) { try log.sync(options: SyncOptions(token: Self.token)) }
    #expect(Self.liveSync(log, SyncOptions(token: Self.token)) == untrusted)
    #expect(try log.sync(options: SyncOptions(token: Self.token, caFile: cert)).seq == 1)

    let run = guarded.replica.run(["sync"], environment: ["MSGLOG_TOKEN": Self.token])
    #expect(run.code == 1, "\(run)")
    #expect(
      run.stderr == """
        msglog: cannot trust \(guarded.url): the certificate of \(origin) is not signed by a trusted authority
        hint: if you trust it, give the authority that signed its certificate with --cacert FILE

        """, "\(run)")
  }

  /// A token for a host beyond this machine over plain http:// is warned
  /// of (the address is a documentation one: nothing answers there); over
  /// loopback it is not.
  @Test func aTokenInTheClearIsWarnedOf() throws {
    let s = Sandbox()
    let warning = "msglog: warning: the token goes to http://192.0.2.1:9 over plain http://"
    let far = s.run(["clone", "http://192.0.2.1:9", "--timeout", "1"], environment: ["MSGLOG_TOKEN": "t"])
    #expect(far.code == 1 && far.stderr.hasPrefix(warning), "\(far)")
    #expect(s.isEmpty)
    let tokenless = s.run(["clone", "http://192.0.2.1:9", "--timeout", "1"])
    #expect(tokenless.code == 1 && !tokenless.stderr.contains("warning"), "\(tokenless)")
    let guarded = try TokenServer()
    let near = guarded.replica.run(["sync"], environment: ["MSGLOG_TOKEN": Self.token])
    #expect(near.code == 0 && near.stderr.isEmpty, "\(near)")
  }
}
