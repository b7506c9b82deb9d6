/// An item's identity: a UUID (16 bytes, RFC 4122), printed in lowercase
/// canonical form.
///
/// msglog's own type rather than Foundation's `UUID`, so that the core and
/// the command line need no Foundation: linking it made every msglog
/// process start a third slower. Bridge with `UUID(uuid:)`/`ItemID(bytes:)`
/// where an app has Foundation.
public struct ItemID: Hashable, Sendable, CustomStringConvertible {
  // The 16 bytes in storage order as two words, byte k of a word its k-th
  // least significant (a little-endian load, what x86-64 and ARM do
  // natively): hashing and equality are two word operations.
  private var first: UInt64
  private var second: UInt64

  private init(first: UInt64, second: UInt64) {
    self.first = first
    self.second = second
  }

  /// A new random (version 4) id, as Foundation's `UUID()`.
  public init() { self = .random() }

  /// Reads 16 bytes (network order, as stored on disk) as an id.
  public init(bytes: UnsafeRawBufferPointer) {
    precondition(bytes.count == 16, "a UUID is 16 bytes")
    first = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self))
    second = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
  }

  /// The 16 bytes lent to `body`, in network order.
  public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    let storage: InlineArray<2, UInt64> = [first.littleEndian, second.littleEndian]
    return try Swift.withUnsafeBytes(of: storage) { try body($0) }
  }

  /// The 16 bytes in network order, as stored on disk.
  public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

  /// Lowercase canonical text form, as every msglog output prints it.
  public var text: String { hex(dashed: true, bytes: 16) }

  /// The first eight characters, as `list` prints them.
  public var short: String { hex(dashed: false, bytes: 4) }

  public var description: String { text }

  /// Writes the canonical text form (36 bytes) at `out`: eight digits at
  /// a time from the two words (`Hex.eightDigits(of:)`), the dashes where they
  /// go (`--json list` writes one per item).
  package func writeText(into out: UnsafeMutablePointer<UInt8>) {
    let raw = UnsafeMutableRawPointer(out)
    let (b0, b4) = (
      Hex.eightDigits(of: UInt32(truncatingIfNeeded: first)),
      Hex.eightDigits(of: UInt32(truncatingIfNeeded: first >> 32))
    )
    let (b8, b12) = (
      Hex.eightDigits(of: UInt32(truncatingIfNeeded: second)),
      Hex.eightDigits(of: UInt32(truncatingIfNeeded: second >> 32))
    )
    // 8-4-4-4-12: bytes 0-3, 4-5, 6-7, 8-9, 10-15.
    raw.storeBytes(of: b0.littleEndian, as: UInt64.self)
    out[8] = UInt8(ascii: "-")
    raw.storeBytes(of: UInt32(truncatingIfNeeded: b4).littleEndian, toByteOffset: 9, as: UInt32.self)
    out[13] = UInt8(ascii: "-")
    raw.storeBytes(of: UInt32(truncatingIfNeeded: b4 >> 32).littleEndian, toByteOffset: 14, as: UInt32.self)
    out[18] = UInt8(ascii: "-")
    raw.storeBytes(of: UInt32(truncatingIfNeeded: b8).littleEndian, toByteOffset: 19, as: UInt32.self)
    out[23] = UInt8(ascii: "-")
    raw.storeBytes(of: UInt32(truncatingIfNeeded: b8 >> 32).littleEndian, toByteOffset: 24, as: UInt32.self)
    raw.storeBytes(of: b12.littleEndian, toByteOffset: 28, as: UInt64.self)
  }

  /// The first eight characters (`short`), written at `out` (`list` writes
  /// one per line): the low four bytes of `first`.
  package func writeShort(into out: UnsafeMutablePointer<UInt8>) {
    UnsafeMutableRawPointer(out).storeBytes(
      of: Hex.eightDigits(of: UInt32(truncatingIfNeeded: first)).littleEndian, as: UInt64.self)
  }

  /// The first eight characters (`short`), appended as bytes.
  package func appendShort(to out: inout [UInt8]) {
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
    // `--json list` writes millions: the bytes and the digit table are
    // read through pointers taken once, not a call per digit.
    withUnsafeBytes { raw in
      let digits = Hex.digits.utf8Start
      var j = 0
      for i in 0..<count {
        if dashed && (i == 4 || i == 6 || i == 8 || i == 10) {
          out[j] = UInt8(ascii: "-")
          j += 1
        }
        out[j] = digits[Int(raw[i] >> 4)]
        out[j + 1] = digits[Int(raw[i] & 0x0F)]
        j += 2
      }
      return j
    }
  }

  /// Parses a UUID's text: the canonical 8-4-4-4-12 form, or its 32 hex
  /// digits without the dashes (as some systems print a UUID), in any
  /// case; nil for anything else. Every id msglog reads — an argument,
  /// `--id`, an import line, a request body — goes through here, and every
  /// id it prints is canonical.
  public init?(canonical string: String) {
    var string = string
    guard let id = string.withUTF8({ ItemID(canonicalUTF8: UnsafeRawBufferPointer($0)) }) else { return nil }
    self = id
  }

  /// A UUID in either text form, any case; refused as `malformedID` otherwise.
  package init(validating text: String) throws(MsglogError) {
    guard let id = ItemID(canonical: text) else { throw .invalidInput(.malformedID(text)) }
    self = id
  }

  /// Parses either text form from UTF-8 bytes (the import parser's path).
  package init?(canonicalUTF8 utf8: UnsafeRawBufferPointer) {
    // 36 bytes with the dashes at 8, 13, 18 and 23, or 32 digits.
    let dashed = utf8.count == 36
    guard dashed || utf8.count == 32, let text = utf8.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
      return nil
    }
    if dashed {
      let dash = UInt8(ascii: "-")
      guard text[8] == dash, text[13] == dash, text[18] == dash, text[23] == dash else { return nil }
    }
    // Straight-line and without a branch per digit (an import parses an id
    // per line): each digit's value is computed whatever it is, and a byte
    // that is no hex digit only clears `valid`, looked at once at the end.
    var valid: UInt8 = 1
    @inline(__always) func nibble(_ c: UInt8) -> UInt64 {
      let digit = c &- 0x30  // "0"…"9" → 0…9
      let letter = (c | 0x20) &- 0x61  // "a"…"f", "A"…"F" → 0…5
      let isDigit = digit < 10
      valid &= (isDigit ? 1 : 0) | (letter < 6 ? 1 : 0)
      return UInt64(isDigit ? digit : letter &+ 10)
    }
    // Byte k of the id is the two digits at 2k, plus one for each dash
    // before them; byte k of a word its k-th least significant (`init(bytes:)`).
    @inline(__always) func byte(_ at: Int) -> UInt64 { nibble(text[at]) << 4 | nibble(text[at &+ 1]) }
    let first: UInt64, second: UInt64
    if dashed {
      first =
        byte(0) | byte(2) << 8 | byte(4) << 16 | byte(6) << 24 | byte(9) << 32 | byte(11) << 40 | byte(14) << 48
        | byte(16) << 56
      second =
        byte(19) | byte(21) << 8 | byte(24) << 16 | byte(26) << 24 | byte(28) << 32 | byte(30) << 40
        | byte(32) << 48 | byte(34) << 56
    } else {
      first =
        byte(0) | byte(2) << 8 | byte(4) << 16 | byte(6) << 24 | byte(8) << 32 | byte(10) << 40 | byte(12) << 48
        | byte(14) << 56
      second =
        byte(16) | byte(18) << 8 | byte(20) << 16 | byte(22) << 24 | byte(24) << 32 | byte(26) << 40
        | byte(28) << 48 | byte(30) << 56
    }
    guard valid == 1 else { return nil }
    self.init(first: first, second: second)
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
  package static func precedesInStorageOrder(_ a: ItemID, _ b: ItemID) -> Bool {
    (a.first.byteSwapped, a.second.byteSwapped) < (b.first.byteSwapped, b.second.byteSwapped)
  }

  /// The nil UUID, all zeros: no replica's id (`Limits.check(_:at:)`).
  package static let `nil` = ItemID(first: 0, second: 0)

  /// A new random (version 4) UUID, from getrandom(2).
  public static func random() -> ItemID {
    var generator = SystemRandomNumberGenerator()
    let first: UInt64 = generator.next()
    let second: UInt64 = generator.next()
    return ItemID(
      first: first & ~(0xF0 << 48) | 0x40 << 48,  // byte 6: version 4
      second: second & ~0xC0 | 0x80)  // byte 8: the RFC 4122 variant
  }
}
