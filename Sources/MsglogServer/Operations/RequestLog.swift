import Msglog
import MsglogWire
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// `--log-format`: how each request's line is written on stderr, or none.
package enum LogFormat: String, CaseIterable, Sendable {
  case text
  case json
  case none
}

/// One answered request, as its line tells it: what an nginx access log
/// shows, with the request's id. Never a header's value (a token), never a
/// body, and the target without a token (`redacting`).
struct RequestRecord {
  /// When the answer ended.
  var time: WallTime
  var id: String
  var client: String
  /// The token's name (`(operator)` for the operator's); nil for none,
  /// `-` in text. Never the token itself.
  var token: String?
  /// `-` for a request refused before its line was read.
  var method: String
  var target: String
  var status: UInt32
  /// Bytes written to the client for this answer (its head and body).
  var bytes: Int
  var milliseconds: Double
  /// Why a 401, 403 or 429 was answered (`missing`, `unknown`, `revoked`,
  /// `expired`, `scope`, `throttled`, `policy`); nil otherwise.
  var refusal: String? = nil
}

/// The request log and the lines an operator must act on, on stderr, one
/// `write` per line (whole lines, however many threads write): a request's
/// line as its answer ends, in the format `--log-format` names.
final class RequestLog: Sendable {
  let format: LogFormat
  /// The operator's `--token`, never written: a client that put it in
  /// its target gets `redacted` there.
  let operatorToken: String?

  init(format: LogFormat, operatorToken: String? = nil) {
    self.format = format
    self.operatorToken = operatorToken
  }

  var isOn: Bool { format != .none }

  func write(_ record: RequestRecord) {
    switch format {
    case .none: return
    case .text:
      var line = record.time.rfc3339
      line +=
        " " + record.id + " " + record.client + " " + (record.token ?? "-") + " " + record.method + " "
        + Self.redacting(record.target, operatorToken: operatorToken)
      line += " \(record.status) \(record.bytes) " + Self.milliseconds(record.milliseconds)
      if let refusal = record.refusal { line += " refused=" + refusal }
      line += "\n"
      Self.emit(line)
    case .json:
      var line: [UInt8] = []
      line.reserveCapacity(192)
      Self.member("time", record.time.rfc3339, first: true, &line)
      Self.member("id", record.id, &line)
      Self.member("client", record.client, &line)
      if let token = record.token { Self.member("token", token, &line) } else { line += Array(",\"token\":null".utf8) }
      Self.member("method", record.method, &line)
      Self.member("path", Self.redacting(record.target, operatorToken: operatorToken), &line)
      line += Array(",\"status\":\(record.status),\"bytes\":\(record.bytes),\"ms\":".utf8)
      line += Array(Self.milliseconds(record.milliseconds).utf8)
      if let refusal = record.refusal { Self.member("refused", refusal, &line) }
      line += Array("}\n".utf8)
      Self.emit(line)
    }
  }

  private static func member(_ key: String, _ value: String, first: Bool = false, _ line: inout [UInt8]) {
    line += Array(((first ? "{" : ",") + "\"" + key + "\":").utf8)
    JSONWriter.appendString(value, to: &line)
  }

  /// A line of its own for what an operator must act on: `msglog: warn: …`
  /// (text, and when the request log is off), or an object with `level`.
  func notice(_ level: String, _ message: String) {
    guard format == .json else { return Self.emit("msglog: \(level): \(message)\n") }
    var line: [UInt8] = []
    Self.member("time", WallTime.now().rfc3339, first: true, &line)
    Self.member("level", level, &line)
    Self.member("message", message, &line)
    line += Array("}\n".utf8)
    Self.emit(line)
  }

  static func emit(_ line: String) { emit(Array(line.utf8)) }

  static func emit(_ bytes: [UInt8]) {
    var sent = 0
    while sent < bytes.count {
      let n = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress! + sent, $0.count - sent) }
      if n > 0 {
        sent += n
      } else if n < 0 && errno == EINTR {
        continue
      } else {
        return
      }
    }
  }

  /// Three decimals: a millisecond's thousandths.
  static func milliseconds(_ value: Double) -> String {
    let micros = Int((max(value, 0) * 1000).rounded())
    let fraction = String(micros % 1000)
    return "\(micros / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
  }

  /// The target with no token in it: the value of every query parameter
  /// whose name holds `token` (in any case, however %-encoded: `token`,
  /// a client's habitual `access_token`) left out — `?token=` stays, to
  /// show it was sent — a named token's secret wherever it is (a token
  /// pasted into a path, another parameter; its underscores as they are or
  /// %-encoded) written as `redacted`, its id kept, and the operator's
  /// token (`--token`), wherever it is as it was set, written as `redacted`.
  ///
  /// Then, whatever its spelling: every run of more than 32 hex digits,
  /// read %-decoded (a secret %-encoded whole, after `msglog+`, alone, or
  /// more than half of one: what is left of a secret after 32 of its
  /// digits is still 128 bits no one can guess), is written as `redacted`;
  /// and a target that holds the operator's token only %-encoded is
  /// logged without its query, or as `redacted` when its path holds it.
  static func redacting(_ target: String, operatorToken: String? = nil) -> String {
    var target = redactingHexRuns(redactingSecrets(target))
    if let operatorToken, !operatorToken.isEmpty {
      if target.contains(operatorToken) { target = target.replacing(operatorToken, with: "redacted") }
      // (Decoded only where there is something to decode: every logged request comes here.)
      if target.utf8.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }),
        percentDecoded(target).contains(operatorToken)
      {
        let path = target.prefix { $0 != "?" }
        return percentDecoded(path).contains(operatorToken) ? "redacted" : path + "?redacted"
      }
    }
    guard let question = target.firstIndex(of: "?") else { return target }
    let query = target[target.index(after: question)...]
    var changed = false
    let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> Substring in
      let name = pair.prefix { $0 != "=" }
      guard namesToken(name), name.count < pair.count else { return pair }
      changed = true
      return name + "="
    }
    return changed ? String(target[...question] + pairs.joined(separator: "&")) : target
  }

  private static func namesToken(_ name: Substring) -> Bool {
    percentDecoded(name).lowercased().contains("token")
  }

  /// `target` with the 64 hex digits of every `msglog_<16 hex>_<64 hex>`
  /// (`TokenSecret`'s shape; an underscore may come %-encoded, `%5F`)
  /// replaced by `redacted`.
  static func redactingSecrets(_ target: String) -> String {
    // Every logged request comes here: nothing is copied unless a token is found.
    var target = target
    let redacted = target.withUTF8 { bytes -> [UInt8]? in
      var out: [UInt8]? = nil
      var copied = 0
      var at = 0
      while at < bytes.count {
        guard bytes[at] | 0x20 == UInt8(ascii: "m"), let (secret, end) = namedToken(in: bytes, at: at) else {
          at += 1
          continue
        }
        out = (out ?? []) + bytes[copied..<secret] + Array("redacted".utf8)
        (copied, at) = (end, end)
      }
      return out.map { $0 + bytes[copied...] }
    }
    return redacted.map { String(decoding: $0, as: UTF8.self) } ?? target
  }

  /// The longest run of hex digits the log writes as it is: a UUID
  /// without its dashes, not a token's 64-digit secret.
  static let longestHexRunKept = 32

  /// `target` with every run of more than `longestHexRunKept` hex digits,
  /// as the target reads %-decoded, written as `redacted` (the run's
  /// bytes as sent, %-escapes and all, go).
  static func redactingHexRuns(_ target: String) -> String {
    var target = target
    let redacted = target.withUTF8 { bytes -> [UInt8]? in
      var out: [UInt8]? = nil
      var copied = 0
      var (run, digits) = (0, 0)
      var at = 0
      func endRun() {
        if digits > longestHexRunKept {
          out = (out ?? []) + bytes[copied..<run] + Array("redacted".utf8)
          copied = at
        }
        digits = 0
      }
      while at < bytes.count {
        let (byte, next) = decodedByte(bytes, at: at)
        if Hex.value(of: byte) != nil {
          if digits == 0 { run = at }
          digits += 1
        } else {
          endRun()
        }
        at = next
      }
      endRun()
      return out.map { $0 + bytes[copied...] }
    }
    return redacted.map { String(decoding: $0, as: UTF8.self) } ?? target
  }

  /// The byte a target means at `at` (a %-escape's, `+` as a space) and where the next begins.
  private static func decodedByte(_ bytes: UnsafeBufferPointer<UInt8>, at: Int) -> (UInt8, Int) {
    if bytes[at] == UInt8(ascii: "%"), at + 2 < bytes.count, let high = Hex.value(of: bytes[at + 1]),
      let low = Hex.value(of: bytes[at + 2])
    {
      return (high << 4 | low, at + 3)
    }
    return (bytes[at] == UInt8(ascii: "+") ? UInt8(ascii: " ") : bytes[at], at + 1)
  }

  /// `text` as it reads %-decoded (`+` as a space).
  private static func percentDecoded<S: StringProtocol>(_ text: S) -> String {
    var text = String(text)
    return text.withUTF8 { bytes in
      var out: [UInt8] = []
      var at = 0
      while at < bytes.count {
        let (byte, next) = decodedByte(bytes, at: at)
        out.append(byte)
        at = next
      }
      return String(decoding: out, as: UTF8.self)
    }
  }

  /// Where a named token starting at `at` has its secret (after the id and
  /// its underscore) and where it ends; nil when none starts there.
  private static func namedToken(in bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> (secret: Int, end: Int)? {
    var at = start
    /// ASCII letters in either case.
    func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
    func take(_ text: StaticString) -> Bool {
      let count = text.utf8CodeUnitCount
      guard at + count <= bytes.count else { return false }
      for k in 0..<count where lower(bytes[at + k]) != text.utf8Start[k] { return false }
      at += count
      return true
    }
    func underscore() -> Bool { take("_") || take("%5f") }
    func hex(_ count: Int) -> Bool {
      guard at + count <= bytes.count else { return false }
      for k in at..<(at + count) where Hex.value(of: bytes[k]) == nil { return false }
      at += count
      return true
    }
    guard take("msglog"), underscore(), hex(16), underscore() else { return nil }
    let secret = at
    guard hex(64) else { return nil }
    return (secret, at)
  }
}

/// Request ids: the client's `X-Request-ID` when it is 1–64 of
/// `[A-Za-z0-9._-]` (a proxy's, to follow one request through both logs)
/// and holds nothing the log would redact in a target — a token's secret,
/// or the operator's token (the log writes the id, and the answer echoes
/// it) — else one made here: a random prefix for this process and a
/// counter, unique without a system call per request.
final class RequestIDs: Sendable {
  private let prefix: String
  private let counter = Atomic<UInt64>(0)
  private let operatorToken: String?

  init(operatorToken: String? = nil) {
    prefix = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
    self.operatorToken = operatorToken
  }

  func make() -> String {
    let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
    return prefix + "-" + String(n, radix: 16)
  }

  /// The client's id when it may be kept as it is, else a new one.
  func id(for given: String?) -> String {
    if let given, Self.isValid(given), RequestLog.redacting(given, operatorToken: operatorToken) == given {
      return given
    }
    return make()
  }

  static func isValid(_ id: String) -> Bool {
    let bytes = id.utf8
    return (1...64).contains(bytes.count)
      && bytes.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
          return true
        default: return false
        }
      }
  }
}

/// The wall clock, for the log's times (the monotonic clock times durations).
struct WallTime {
  var seconds: Int
  var nanoseconds: Int

  static func now() -> WallTime {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return WallTime(seconds: time.tv_sec, nanoseconds: time.tv_nsec)
  }

  var since1970: Double { Double(seconds) + Double(nanoseconds) / 1e9 }

  /// `2026-12-01T11:30:00.123Z`.
  var rfc3339: String {
    var t = time_t(seconds)
    var parts = tm()
    gmtime_r(&t, &parts)
    func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let millis = nanoseconds / 1_000_000
    let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
    return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):"
      + "\(two(parts.tm_min)):\(two(parts.tm_sec)).\(ms)Z"
  }
}
