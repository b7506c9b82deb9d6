/// An item's identity: a UUID (16 bytes, RFC 4122), printed in lowercase
/// canonical form.
///
/// msglog's own type rather than Foundation's `UUID`, so that the core and
/// the command line need no Foundation: linking it made every msglog
/// process start a third slower. Bridge with `UUID(uuid:)`/`ItemID(bytes:)`
/// where an app has Foundation.
public struct ItemID: Hashable, Sendable, CustomStringConvertible {
  // The 16 bytes in storage order, loaded as two machine words: hashing
  // and equality are two word operations.
  private var first: UInt64
  private var second: UInt64

  /// A new random (version 4) id, as Foundation's `UUID()`.
  public init() { self = .random() }

  /// Reads 16 bytes (network order, as stored on disk) as an id.
  public init(bytes: UnsafeRawBufferPointer) {
    precondition(bytes.count == 16, "a UUID is 16 bytes")
    first = bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
    second = bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
  }

  /// The 16 bytes lent to `body`, in network order.
  public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try Swift.withUnsafeBytes(of: (first, second)) { try body($0) }
  }

  /// The 16 bytes in network order, as stored on disk.
  public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

  /// Lowercase canonical text form, as every msglog output prints it.
  public var text: String { hex(dashed: true, bytes: 16) }

  /// The first eight characters, as `list` prints them.
  public var short: String { hex(dashed: false, bytes: 4) }

  public var description: String { text }

  /// Writes the canonical text form (36 bytes) at `out`.
  public func writeText(into out: UnsafeMutablePointer<UInt8>) {
    _ = writeHex(dashed: true, bytes: 16, into: out)
  }

  /// The first eight characters (`short`), appended as bytes.
  public func appendShort(to out: inout [UInt8]) {
    let start = out.count
    out.append(contentsOf: repeatElement(0, count: 8))
    out.withUnsafeMutableBufferPointer { _ = writeHex(dashed: false, bytes: 4, into: $0.baseAddress! + start) }
  }

  private func hex(dashed: Bool, bytes count: Int) -> String {
    String(unsafeUninitializedCapacity: 36) { writeHex(dashed: dashed, bytes: count, into: $0.baseAddress!) }
  }

  /// The first `count` bytes in lowercase hex at `out`, with the canonical
  /// form's dashes when `dashed`; returns the number of bytes written.
  private func writeHex(dashed: Bool, bytes count: Int, into out: UnsafeMutablePointer<UInt8>) -> Int {
    withUnsafeBytes { raw in
      let digits: StaticString = "0123456789abcdef"
      let d = digits.utf8Start
      var j = 0
      for i in 0..<count {
        if dashed && (i == 4 || i == 6 || i == 8 || i == 10) {
          out[j] = UInt8(ascii: "-")
          j += 1
        }
        out[j] = d[Int(raw[i] >> 4)]
        out[j + 1] = d[Int(raw[i] & 0x0F)]
        j += 2
      }
      return j
    }
  }

  /// Parses the canonical 8-4-4-4-12 form in any case; nil for anything else.
  public init?(canonical string: String) {
    var string = string
    guard let id = string.withUTF8({ ItemID(canonicalUTF8: UnsafeRawBufferPointer($0)) }) else { return nil }
    self = id
  }

  /// Parses the canonical form from UTF-8 bytes (the import parser's path).
  public init?(canonicalUTF8 utf8: UnsafeRawBufferPointer) {
    guard utf8.count == 36 else { return nil }
    var raw: (UInt64, UInt64) = (0, 0)
    let ok = Swift.withUnsafeMutableBytes(of: &raw) { out -> Bool in
      var j = 0
      var i = 0
      while i < 36 {
        if i == 8 || i == 13 || i == 18 || i == 23 {
          guard utf8[i] == UInt8(ascii: "-") else { return false }
          i += 1
          continue
        }
        guard let high = utf8[i].hexValue, let low = utf8[i + 1].hexValue else { return false }
        out[j] = high << 4 | low
        j += 1
        i += 2
      }
      return true
    }
    guard ok else { return nil }
    first = raw.0
    second = raw.1
  }

  /// Dictionaries of ids (a session's id rows, an import's lookups) hash
  /// millions of them: two multiply-xorshift rounds over the two words,
  /// keyed by the process's hashing seed, instead of a full SipHash.
  /// Random per-process seeding keeps imported (chosen) ids from being
  /// aimed at one bucket.
  public func _rawHashValue(seed: Int) -> Int {
    var h = first ^ UInt64(UInt(bitPattern: seed)) &* 0x9E37_79B9_7F4A_7C15
    h = (h ^ (h >> 29)) &* 0xBF58_476D_1CE4_E5B9
    h ^= second
    h = (h ^ (h >> 32)) &* 0x94D0_49BB_1331_11EB
    return Int(truncatingIfNeeded: h ^ (h >> 29))
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(first)
    hasher.combine(second)
  }

  /// Byte order, as the id index keeps ids (and writes them fastest).
  public static func precedesInStorageOrder(_ a: ItemID, _ b: ItemID) -> Bool {
    (a.first.bigEndian, a.second.bigEndian) < (b.first.bigEndian, b.second.bigEndian)
  }

  /// A new random (version 4) UUID, from getrandom(2).
  public static func random() -> ItemID {
    var generator = SystemRandomNumberGenerator()
    var bytes = (generator.next() as UInt64, generator.next() as UInt64)
    return Swift.withUnsafeMutableBytes(of: &bytes) { raw in
      raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
      raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
      return ItemID(bytes: UnsafeRawBufferPointer(raw))
    }
  }
}

extension UInt8 {
  var isHexDigit: Bool { hexValue != nil }

  var hexValue: UInt8? {
    switch self {
    case 0x30...0x39: self - 0x30
    case 0x41...0x46: self - 0x41 + 10
    case 0x61...0x66: self - 0x61 + 10
    default: nil
    }
  }
}
