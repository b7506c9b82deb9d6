import Foundation
import MsglogTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What the operations tests share: curl with its answer's head, the
/// Python tools scripts/setup installs into .build/ops-python (PyPI's
/// prometheus-client and schemathesis), and a free port for a program of
/// another kind (Prometheus).
enum Operations {
  /// One exchange with curl: the status, the head's fields (names in
  /// lowercase), the body, and the bytes curl received (head and body;
  /// pass `--raw` for a chunked answer's framing to count).
  struct Exchange: CustomStringConvertible {
    var status: Int
    var headers: [String: String]
    var body: String
    var received: Int
    var description: String { "\(status) \(headers) \(body)" }
  }

  static func curl(_ url: String, _ extra: [String] = [], in dir: String) -> Exchange {
    let base = dir + "/curl-" + UUID().uuidString
    let r = runProgram(
      "/usr/bin/curl",
      ["-s", "--path-as-is", "-D", base + ".head", "-o", base + ".body", "-w", "%{http_code} %{size_header} %{size_download}"]
        + extra + [url])
    defer { for suffix in [".head", ".body"] { try? FileManager.default.removeItem(atPath: base + suffix) } }
    let figures = r.stdout.split(separator: " ").compactMap { Int($0) }
    let head = (try? String(contentsOfFile: base + ".head", encoding: .utf8)) ?? ""
    var headers: [String: String] = [:]
    for line in head.split(separator: "\r\n").dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }
    // The body file's bytes, not curl's size_download: with --raw they are
    // a chunked answer's bytes as sent, framing included (curl counts the
    // decoded bytes whatever it writes).
    let body = FileManager.default.contents(atPath: base + ".body") ?? Data()
    return Exchange(
      status: figures.first ?? 0, headers: headers, body: String(decoding: body, as: UTF8.self),
      received: figures.count == 3 ? figures[1] + body.count : 0)
  }

  /// The virtual environment `scripts/setup --test` makes, with PyPI's
  /// prometheus-client and schemathesis (Debian's Python is externally managed).
  static let venv = repositoryRoot + "/.build/ops-python"

  /// Runs a script of Tests/Operations with the environment's Python.
  static func python(_ script: String, _ arguments: [String], stdin: Data = Data()) -> Run {
    runProgram(venv + "/bin/python", [repositoryRoot + "/Tests/Operations/" + script] + arguments, stdin: stdin)
  }

  /// A port no one listens on now (bound and released).
  static func freePort() -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
        bind(fd, sockaddr, length)
        return getsockname(fd, sockaddr, &length)
      }
    }
    return UInt16(bigEndian: address.sin_port)
  }

  /// The request log's lines and the rest of what the server wrote on stderr.
  static func lines(_ stderr: String) -> [String] {
    stderr.split(separator: "\n").map(String.init)
  }
}
