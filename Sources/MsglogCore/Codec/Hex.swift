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

  /// The four bytes of `word`, its least significant first, as eight
  /// lowercase hex digits in the bytes of the result, its least significant
  /// first (store it little-endian): all eight worked out at once in one
  /// register, where a table lookup a digit cost `--json list` a tenth of
  /// its instructions. Each byte goes to a 16-bit lane, its high nibble to
  /// the lane's low byte; a nibble n becomes '0' + n, and 39 more ('a' − '0'
  /// − 10) when n ≥ 10, which n + 6 carrying into bit 4 tells. No byte
  /// carries into the next (the largest is 'f', 0x66).
  @inline(__always)
  package static func eightDigits(of word: UInt32) -> UInt64 {
    var x = UInt64(word)
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF
    let nibbles = ((x >> 4) & 0x000F_000F_000F_000F) | ((x & 0x000F_000F_000F_000F) << 8)
    let letters = ((nibbles &+ 0x0606_0606_0606_0606) >> 4) & 0x0101_0101_0101_0101
    return nibbles &+ 0x3030_3030_3030_3030 &+ letters &* 39
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
