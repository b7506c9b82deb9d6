/// A named token as its holder has it: `msglog_<id>_<secret>`, the id 16
/// hex digits and the secret 64 (32 random bytes). The prefix lets a
/// secret scanner (GitHub's, a log's) tell it for what it is; the id lets
/// a server find the one row to compare with, in constant time, without
/// a scan over every token's hash.
public struct TokenSecret: Sendable, CustomStringConvertible {
  package let id: String
  package let secret: [UInt8]

  static let prefix = "msglog_"

  /// A new token: its id and secret from the system's generator.
  package static func random() -> TokenSecret {
    var generator = SystemRandomNumberGenerator()
    let id =
      Hex.text(UInt32(truncatingIfNeeded: generator.next() as UInt64), width: 8)
      + Hex.text(UInt32(truncatingIfNeeded: generator.next() as UInt64), width: 8)
    var secret: [UInt8] = []
    for _ in 0..<4 { secret.appendBigEndian(generator.next() as UInt64) }
    return TokenSecret(id: id, secret: secret)
  }

  private init(id: String, secret: [UInt8]) {
    self.id = id
    self.secret = secret
  }

  /// Reads what a client presented; nil for what is no named token (the
  /// operator's token, or garbage).
  package init?(presented text: some StringProtocol) {
    let bytes = Array(text.utf8)
    let prefix = Array(Self.prefix.utf8)
    guard bytes.count == prefix.count + 16 + 1 + 64, bytes.starts(with: prefix),
      bytes[prefix.count + 16] == UInt8(ascii: "_")
    else { return nil }
    let id = String(decoding: bytes[prefix.count..<(prefix.count + 16)], as: UTF8.self)
    guard NamedToken.isID(id), let secret = Hex.bytes(bytes[(prefix.count + 17)...]), secret.count == 32 else {
      return nil
    }
    self.init(id: id, secret: secret)
  }

  /// What the log keeps of it.
  package var digest: SHA256.Digest { SHA256.hash(secret) }

  /// The token as its holder uses it; shown once, by `token add`.
  public var token: String {
    var text = Self.prefix + id + "_"
    for byte in secret { text.unicodeScalars.append(contentsOf: [Self.hex(byte >> 4), Self.hex(byte & 15)]) }
    return text
  }

  private static func hex(_ nibble: UInt8) -> Unicode.Scalar { Unicode.Scalar(Hex.digit(nibble)) }

  /// Never the secret: it must not reach a message or a log line.
  public var description: String { "(token \(id))" }
}
