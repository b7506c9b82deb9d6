/// What proves a replica is itself to its remote (docs/SYNC.md, "A
/// replica proves it is itself"): 32 random bytes made by `clone`, kept in
/// the replica's own state and sent with every push as 64 lowercase hex
/// digits. The remote keeps only its SHA-256 (`digest`), with the
/// replica's progress, and requires it on every push for that replica id.
///
/// A replica's id is public (every event's origin shows it); its secret is
/// never in an event, an export, `status` or a message: `description` does
/// not show it.
package struct ReplicaSecret: Equatable, Sendable, CustomStringConvertible {
  package let bytes: [UInt8]

  /// A secret's length in bytes.
  package static let length = 32

  /// `bytes` as a secret; nil unless they are 32.
  package init?(bytes: [UInt8]) {
    guard bytes.count == Self.length else { return nil }
    self.bytes = bytes
  }

  /// A new secret: 32 bytes from the system's generator (getrandom(2)).
  package static func random() -> ReplicaSecret {
    var generator = SystemRandomNumberGenerator()
    var bytes: [UInt8] = []
    bytes.reserveCapacity(length)
    for _ in 0..<length / 8 { bytes.appendBigEndian(generator.next() as UInt64) }
    return ReplicaSecret(bytes: bytes)!
  }

  /// Reads the wire form: exactly 64 lowercase hex digits.
  package init?(hex text: String) {
    let digits = Array(text.utf8)
    guard digits.count == 2 * Self.length,
      digits.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }),
      let bytes = Hex.bytes(digits)
    else { return nil }
    self.bytes = bytes
  }

  /// The wire form: 64 lowercase hex digits.
  package var hex: String {
    var out: [UInt8] = []
    out.reserveCapacity(2 * Self.length)
    for byte in bytes {
      out.append(Hex.digit(byte >> 4))
      out.append(Hex.digit(byte))
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// What the remote keeps of it.
  package var digest: SHA256.Digest { SHA256.hash(bytes) }

  /// Never the secret itself: a secret must not reach a message or a log line.
  package var description: String { "(a replica's secret)" }
}
