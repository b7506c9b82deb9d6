import Foundation

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
