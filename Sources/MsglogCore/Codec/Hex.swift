/// Lowercase hexadecimal, written and read in one place: item ids, JSON's
/// `\u00XX` escapes, the terminal's `\xHH` and `\u{HHHH}`, checksums in
/// messages, id prefixes.
package enum Hex {
  /// The sixteen digits, in order: a loop writing many (an id) takes
  /// `utf8Start` once and indexes it.
  package static let digits: StaticString = "0123456789abcdef"

  /// The digit of a value 0…15 (higher bits are ignored).
  @inline(__always)
  package static func digit(_ nibble: UInt8) -> UInt8 {
    digits.utf8Start[Int(nibble & 0x0F)]
  }

  /// The value of a hex digit in either case; nil for any other byte.
  @inline(__always)
  package static func value(of digit: UInt8) -> UInt8? {
    switch digit {
    case 0x30...0x39: digit - 0x30
    case 0x41...0x46: digit - 0x41 + 10
    case 0x61...0x66: digit - 0x61 + 10
    default: nil
    }
  }

  /// `value` in lowercase hex, zero-padded to at least `width` digits.
  package static func text(_ value: UInt32, width: Int) -> String {
    var bytes: [UInt8] = []
    var shift = 28
    while shift >= 0 {
      let nibble = UInt8(truncatingIfNeeded: value >> UInt32(shift))
      if !bytes.isEmpty || nibble & 0x0F != 0 || shift < 4 * width { bytes.append(digit(nibble)) }
      shift -= 4
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The bytes that hex digits spell, two digits a byte; an odd last digit
  /// is the high half of a byte whose low half is 0 (the smallest id key
  /// with that prefix). Nil when a character is not a digit.
  package static func bytes(_ digits: some Sequence<UInt8>) -> [UInt8]? {
    var bytes: [UInt8] = []
    var high: UInt8? = nil
    for digit in digits {
      guard let value = value(of: digit) else { return nil }
      if let first = high {
        bytes.append(first << 4 | value)
        high = nil
      } else {
        high = value
      }
    }
    if let high { bytes.append(high << 4) }
    return bytes
  }
}
