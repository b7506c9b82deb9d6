import FoundationEssentials

/// An item's identity: a UUID, printed in lowercase canonical form.
public typealias ItemID = UUID

extension UUID {
  /// Lowercase canonical text form, as every msglog output prints it.
  ///
  /// Written here: Foundation's `uuidString` formats each byte with
  /// snprintf, which made up a third of a `replay` of 100,000 items.
  public var text: String { hex(dashed: true, bytes: 16) }

  /// The first eight characters, as `list` prints them.
  public var short: String { hex(dashed: false, bytes: 4) }

  private func hex(dashed: Bool, bytes count: Int) -> String {
    withUnsafeBytes(of: uuid) { raw in
      String(unsafeUninitializedCapacity: 36) { out in
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
  }

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
    self.init(uuid: bytes.loadUnaligned(as: uuid_t.self))
  }
}

extension UInt8 {
  var isHexDigit: Bool {
    (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
  }
}
