import FoundationEssentials

/// An item's identity: a UUID, printed in lowercase canonical form.
public typealias ItemID = UUID

extension UUID {
  /// Lowercase canonical text form, as every msglog output prints it.
  public var text: String { uuidString.lowercased() }

  /// The first eight characters, as `list` prints them.
  public var short: String { String(text.prefix(8)) }

  /// Parses the canonical 8-4-4-4-12 form in any case; nil for anything else.
  public init?(canonical string: String) {
    let utf8 = string.utf8
    guard utf8.count == 36 else { return nil }
    for (offset, byte) in utf8.enumerated() {
      let isDashPosition = offset == 8 || offset == 13 || offset == 18 || offset == 23
      if isDashPosition {
        guard byte == UInt8(ascii: "-") else { return nil }
      } else {
        guard byte.isHexDigit else { return nil }
      }
    }
    self.init(uuidString: string)
  }

  /// A new random (version 4) UUID.
  ///
  /// Foundation's `UUID()` opens /dev/urandom for every id on Linux, which
  /// dominated bulk appends; the system generator uses getrandom(2) instead.
  public static func random() -> ItemID {
    var generator = SystemRandomNumberGenerator()
    var bytes = (generator.next() as UInt64, generator.next() as UInt64)
    return withUnsafeMutableBytes(of: &bytes) { raw in
      raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
      raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 4122 variant
      return ItemID(bytes: UnsafeRawBufferPointer(raw))
    }
  }

  /// The 16 bytes of the UUID in network order, as stored on disk.
  public var bytes: [UInt8] {
    withUnsafeBytes(of: uuid) { Array($0) }
  }

  /// Reads 16 bytes as a UUID.
  public init(bytes: UnsafeRawBufferPointer) {
    precondition(bytes.count == 16, "a UUID is 16 bytes")
    var value: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
    self.init(uuid: value)
  }
}

extension UInt8 {
  var isHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}
