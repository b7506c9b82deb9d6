/// Values written in place, at a pointer into room reserved for them: a
/// shape written a hundred thousand times in one document (`list --json`'s
/// items) costs one reservation instead of an append, with its uniqueness
/// and capacity checks, for each of its dozen pieces.
extension JSONWriter {
  /// How many bytes `write(escaped:to:)` writes for `utf8`, exactly: a
  /// quote, a backslash or a control with a short form becomes two bytes,
  /// any other control six (`\u001f`).
  package static func escapedLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
    var length = utf8.count
    for b in utf8 where b < 0x20 || b == 0x22 || b == 0x5C {
      switch b {
      case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C: length += 1
      default: length += 5
      }
    }
    return length
  }

  /// `appendEscaped`'s bytes, at `p`, which moves past them.
  package static func write(escaped utf8: UnsafeBufferPointer<UInt8>, to p: inout UnsafeMutablePointer<UInt8>) {
    guard let base = utf8.baseAddress else { return }
    var plain = 0  // start of the run of bytes copied as they are
    for i in 0..<utf8.count {
      let b = base[i]
      guard b < 0x20 || b == 0x22 || b == 0x5C else { continue }
      copy(base + plain, count: i - plain, to: &p)
      plain = i + 1
      p[0] = UInt8(ascii: "\\")
      switch b {
      case 0x22, 0x5C: p[1] = b
      case 0x0A: p[1] = UInt8(ascii: "n")
      case 0x0D: p[1] = UInt8(ascii: "r")
      case 0x09: p[1] = UInt8(ascii: "t")
      case 0x08: p[1] = UInt8(ascii: "b")
      case 0x0C: p[1] = UInt8(ascii: "f")
      default:
        p[1] = UInt8(ascii: "u")
        p[2] = 0x30
        p[3] = 0x30
        p[4] = Hex.digit(b >> 4)
        p[5] = Hex.digit(b)
        p += 4
      }
      p += 2
    }
    copy(base + plain, count: utf8.count - plain, to: &p)
  }

  /// `appendDecimal`'s digits (at most 20), at `p`, which moves past them.
  package static func write(decimal value: UInt64, to p: inout UnsafeMutablePointer<UInt8>) {
    let digits = DecimalDigits.count(value)
    DecimalDigits.write(value, digits: digits, at: p)
    p += digits
  }

  /// Room for what `write(quoted:to:)` writes for any time (32 bytes at
  /// most: a year of nine digits and a sign).
  package static let quotedTimeCapacity = 48

  /// The instant in quotes, as `value(_: Timestamp)` writes it, at `p`.
  package static func write(quoted time: Timestamp, to p: inout UnsafeMutablePointer<UInt8>) {
    p.pointee = UInt8(ascii: "\"")
    p += 1
    if !time.writeRFC3339(at: &p) {
      // A year outside 0…9999: its own length, rare enough for an array.
      var text: [UInt8] = []
      time.writeRFC3339(to: &text)
      text.withUnsafeBufferPointer { copy($0.baseAddress!, count: $0.count, to: &p) }
    }
    p.pointee = UInt8(ascii: "\"")
    p += 1
  }

  /// `write(quoted:to:)` with the date taken from, and kept in, `day`.
  package static func write(
    quoted time: Timestamp, day: inout Timestamp.RFC3339Day, to p: inout UnsafeMutablePointer<UInt8>
  ) {
    let start = p
    p.pointee = UInt8(ascii: "\"")
    p += 1
    if !time.writeRFC3339(at: &p, day: &day) {
      // A year outside 0…9999, which has its own length: nothing but the
      // quote was written; start again the long way.
      p = start
      write(quoted: time, to: &p)
      return
    }
    p.pointee = UInt8(ascii: "\"")
    p += 1
  }

  /// `text`'s bytes at `p`, which moves past them (inlinable: the item
  /// writer in MsglogWire calls it a dozen times an item).
  @inlinable @inline(__always)
  package static func write(_ text: StaticString, to p: inout UnsafeMutablePointer<UInt8>) {
    copy(text.utf8Start, count: text.utf8CodeUnitCount, to: &p)
  }

  /// `count` bytes from `from` at `p`, which moves past them. Up to 16
  /// bytes (a key and its punctuation, a short text) as two words that
  /// overlap in the middle, which write no byte outside the `count`.
  /// Always inlined: a key's length is known where it is written, and
  /// the tests fold away (a call each was a tenth of `--json list`).
  @inlinable @inline(__always)
  package static func copy(_ from: UnsafePointer<UInt8>, count: Int, to p: inout UnsafeMutablePointer<UInt8>) {
    let source = UnsafeRawPointer(from)
    let target = UnsafeMutableRawPointer(p)
    if count >= 8 && count <= 16 {
      let head = source.loadUnaligned(as: UInt64.self)
      let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
      target.storeBytes(of: head, as: UInt64.self)
      target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
    } else if count >= 4 && count < 8 {
      let head = source.loadUnaligned(as: UInt32.self)
      let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
      target.storeBytes(of: head, as: UInt32.self)
      target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
    } else if count < 4 {
      for k in 0..<count { p[k] = from[k] }
    } else {
      p.update(from: from, count: count)
    }
    p += count
  }
}
