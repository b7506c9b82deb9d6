import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Servers/scripted_server.py, running: each request it receives takes the
/// next scripted answer, sent byte for byte (over TLS with `tls`).
final class ScriptedServer: @unchecked Sendable {  // the port is fixed; the log is read from its file
  struct Answer {
    enum Then: String { case keep, close, abort, hang }
    /// Bytes (each character one Latin-1 byte) sent once the file `gate`
    /// exists, when there is one (the test says when), and `delay`
    /// milliseconds after the piece before (a server that trickles).
    struct Piece {
      var text: String
      var gate: String?
      var delay: Int

      init(_ text: String, gate: String? = nil, delay: Int = 0) {
        self.text = text
        self.gate = gate
        self.delay = delay
      }
    }

    var pieces: [Piece]
    var then: Then

    init(_ text: String, then: Then = .keep) {
      pieces = [Piece(text)]
      self.then = then
    }

    init(pieces: [Piece], then: Then = .keep) {
      self.pieces = pieces
      self.then = then
    }
  }

  struct Received: Decodable {
    var connection: Int
    var request: String?
    var error: String?
  }

  let port: UInt16
  private let child: Sandbox.Child
  private let logPath: String

  init(_ s: Sandbox, _ answers: [Answer], tls: (certificate: String, key: String)? = nil, ipv6: Bool = false) throws {
    logPath = s.dir + "/scripted-" + UUID().uuidString + ".log"
    let script: [String: Any] = [
      "log": logPath,
      "answers": answers.map { answer in
        [
          "pieces": answer.pieces.map { [$0.text, $0.delay, $0.gate ?? NSNull()] as [Any] },
          "then": answer.then.rawValue,
        ] as [String: Any]
      },
    ]
    let scriptPath = s.dir + "/scripted-" + UUID().uuidString + ".json"
    try JSONSerialization.data(withJSONObject: script).write(to: URL(fileURLWithPath: scriptPath))
    var arguments = [repositoryRoot + "/Tests/MsglogHTTPClientTests/Servers/scripted_server.py", scriptPath]
    if let tls { arguments += ["--tls", tls.certificate, tls.key] }
    if ipv6 { arguments.append("--ipv6") }
    child = s.start(arguments, useDefaultDB: false, runner: "/usr/bin/python3")
    var found: UInt16? = nil
    // A watchdog only: a server that never starts must not hang the suite.
    for _ in 0..<800 {
      let text = (try? String(contentsOfFile: child.outPath, encoding: .utf8)) ?? ""
      if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("port ") }) {
        found = UInt16(line.dropFirst(5))
      }
      if found != nil || !child.process.isRunning { break }
      usleep(25_000)
    }
    guard let found else {
      let run = child.process.isRunning ? nil : child.finish()
      try #require(Bool(false), "the scripted server did not start: \(String(describing: run))")
      fatalError()
    }
    port = found
  }

  deinit { stop() }

  var url: String { "http://127.0.0.1:\(port)" }

  /// Opens `gate`: the pieces waiting for it go out.
  static func open(_ gate: String) { _ = FileManager.default.createFile(atPath: gate, contents: nil) }

  /// Waits until `count` requests have arrived (a watchdog, not a measurement).
  func waitForRequests(_ count: Int) {
    for _ in 0..<2400 {
      if received().filter({ $0.request != nil }).count >= count { return }
      usleep(5_000)
    }
  }

  /// What arrived, in order.
  func received() -> [Received] {
    let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    return text.split(separator: "\n").compactMap { try? JSONDecoder().decode(Received.self, from: Data($0.utf8)) }
  }

  func stop() {
    if child.process.isRunning { kill(child.process.processIdentifier, SIGKILL) }
    _ = child.finish()
  }
}
