#if canImport(Glibc)
  import Glibc
#endif

/// `https://` for a program that cannot run GnuTLS itself (the static
/// `msglog`; see CGnuTLS's gnutls.c): a helper process, a dynamic
/// executable, makes the connection, verifies the server as the client
/// would, and relays the plaintext over a socket pair.
///
/// The helper is run as `HELPER relay URL CONNECT_TIMEOUT [CAFILE]` with
/// its stdin and stdout the socket. It answers first with one line: `ok`,
/// or `error` and the `HTTPClientError` (tab-separated fields), then exits.
/// After `ok` the client's bytes go to the server as they come, and the
/// server's come back in frames — a kind byte and a 4-byte big-endian
/// length, then that many bytes: `D` data; `E` the server ended TLS with
/// close_notify; `U` the connection ended without it; `X` an error line.
/// The helper ends when either side does.
package enum TLSRelay {
  /// The helper's whole program: `main` of an executable linked with this
  /// module (msglog-tls). Returns the exit code.
  package static func run(_ arguments: [String]) -> Int32 {
    guard arguments.count == 4 || arguments.count == 5, arguments[1] == "relay",
      let url = try? HTTPURL(arguments[2]), url.scheme == .https, let timeout = Double(arguments[3])
    else {
      let usage = "usage: \(arguments.first ?? "msglog-tls") relay https://HOST[:PORT] CONNECT_TIMEOUT [CAFILE]\n"
      _ = usage.withCString { write(2, $0, strlen($0)) }
      return 64
    }
    let client: Int32 = 0
    let session: TLSClientSession
    do {
      try TLSLibrary.load()
      let credentials = try TLSCredentials(caFile: arguments.count == 5 ? arguments[4] : nil, origin: url.origin)
      let socket = try Dialer.connect(to: url, timeout: timeout, cancellation: Cancellation())
      session = try TLSClientSession(socket: socket, credentials: credentials, host: url.host)
      try session.handshake(timeout: timeout)
    } catch let error as HTTPClientError {
      send(Array(("error\t" + error.relayLine + "\n").utf8), to: client)
      return 0
    } catch {
      return 70
    }
    guard send(Array("ok\n".utf8), to: client) else { return 0 }
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
      if !session.hasPendingInput {
        var pollers = [
          pollfd(fd: client, events: Int16(POLLIN), revents: 0),
          pollfd(fd: session.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        guard poll(&pollers, 2, -1) >= 0 || errno == EINTR else { return 70 }
        if pollers[0].revents != 0 {
          let count = read(client, &buffer, buffer.count)
          // The client is done with the connection (or gone).
          if count <= 0 { return 0 }
          do {
            try session.send(buffer[..<count], idle: 3_600)
          } catch let error as HTTPClientError {
            send(frame("X", Array(error.relayLine.utf8)), to: client)
            return 0
          } catch {
            return 70
          }
        }
        if pollers[1].revents == 0 { continue }
      }
      do {
        reading: while true {
          switch try buffer.withUnsafeMutableBytes({ try session.receiveAvailable(into: $0) }) {
          case .bytes(let count): guard send(frame("D", Array(buffer[..<count])), to: client) else { return 0 }
          case .again: continue
          case .wouldBlock: break reading
          case .ended(let clean):
            send(frame(clean ? "E" : "U", []), to: client)
            return 0
          }
        }
      } catch let error as HTTPClientError {
        send(frame("X", Array(error.relayLine.utf8)), to: client)
        return 0
      } catch {
        return 70
      }
    }
  }

  private static func frame(_ kind: Character, _ bytes: [UInt8]) -> [UInt8] {
    let length = UInt32(bytes.count)
    return [
      kind.asciiValue!, UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF),
      UInt8(length & 0xFF),
    ] + bytes
  }

  @discardableResult
  private static func send(_ bytes: [UInt8], to descriptor: Int32) -> Bool {
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes {
        Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if count <= 0 {
        if count < 0 && errno == EINTR { continue }
        return false
      }
      offset += count
    }
    return true
  }
}

// MARK: - The error, across the relay

extension HTTPClientError {
  /// Tab-separated fields (a tab or line break in a reason becomes a space).
  var relayLine: String {
    func clean(_ text: String) -> String {
      String(text.map { $0 == "\t" || $0 == "\n" || $0 == "\r" ? " " : $0 })
    }
    switch self {
    case .unreachable(_, let reason): return "unreachable\t" + clean(reason)
    case .timedOut(_, let phase, let seconds):
      return "timedOut\t\(phase == .connect ? "connect" : "answer")\t\(seconds)"
    case .connectionLost(_, let reason): return "connectionLost\t" + clean(reason)
    case .cancelled: return "cancelled"
    case .tls(_, let failure):
      switch failure {
      case .unavailable(let reason): return "tls\tunavailable\t" + clean(reason)
      case .caFile(let path, let reason): return "tls\tcaFile\t" + clean(path) + "\t" + clean(reason)
      case .untrusted: return "tls\tuntrusted"
      case .expired: return "tls\texpired"
      case .notYetValid: return "tls\tnotYetValid"
      case .revoked: return "tls\trevoked"
      case .wrongName(let host): return "tls\twrongName\t" + clean(host)
      case .insecureAlgorithm: return "tls\tinsecureAlgorithm"
      case .failed(let reason): return "tls\tfailed\t" + clean(reason)
      }
    case .invalidURL(let reason), .invalidRequest(let reason), .malformedAnswer(_, let reason):
      return "connectionLost\t" + clean(reason)
    case .answerTooLarge(_, let limit): return "connectionLost\tsent more than \(limit) bytes"
    }
  }

  /// The error a relay's line names, for `origin`; nil for a line that is none.
  init?(relayLine line: Substring, origin: String) {
    let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
    func field(_ index: Int) -> String? { index < fields.count ? fields[index] : nil }
    switch (field(0), field(1)) {
    case ("unreachable", let reason?): self = .unreachable(origin: origin, reason: reason)
    case ("connectionLost", let reason?): self = .connectionLost(origin: origin, reason: reason)
    case ("cancelled", _): self = .cancelled(origin: origin)
    case ("timedOut", let phase?):
      guard let seconds = field(2).flatMap(Double.init) else { return nil }
      self = .timedOut(origin: origin, phase: phase == "connect" ? .connect : .answer, seconds: seconds)
    case ("tls", let kind?):
      let failure: TLSFailure
      switch kind {
      case "unavailable": failure = .unavailable(field(2) ?? "")
      case "caFile": failure = .caFile(path: field(2) ?? "", reason: field(3) ?? "")
      case "untrusted": failure = .untrusted
      case "expired": failure = .expired
      case "notYetValid": failure = .notYetValid
      case "revoked": failure = .revoked
      case "wrongName": failure = .wrongName(host: field(2) ?? "")
      case "insecureAlgorithm": failure = .insecureAlgorithm
      case "failed": failure = .failed(field(2) ?? "")
      default: return nil
      }
      self = .tls(origin: origin, failure)
    default:
      return nil
    }
  }
}
