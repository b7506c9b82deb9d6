/// Escapes text for a terminal, so that a message can neither reprogram it,
/// split its line, nor make it display in another order than it is stored.
///
/// `\` → `\\`, newline → `\n`, carriage return → `\r`, tab → `\t`, other C0
/// controls and DEL → `\xhh`; C1 controls, U+2028/U+2029 and the
/// bidirectional embeddings, overrides and isolates (U+202A–U+202E,
/// U+2066–U+2069: the "Trojan Source" trick, CVE-2021-42574) → `\u{hhhh}`.
package enum TerminalText {
  package static func escape(_ text: String) -> String {
    // Fast path: most messages need no escaping at all.
    var copy = text
    if copy.withUTF8({ isPlain($0) }) { return text }
    // From the bytes, in one pass: appending to a `String.UnicodeScalarView`
    // a scalar at a time copied the whole string again and again, and a
    // text of a megabyte of controls took minutes to print.
    var bytes: [UInt8] = []
    appendEscaped(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `escape(text)` appended as bytes; text that needs no escaping (the
  /// usual message, in any script) is copied without looking at its scalars.
  package static func appendEscaped(_ text: String, to out: inout [UInt8]) {
    var text = text
    text.withUTF8 { utf8 in
      guard !isPlain(utf8) else { return out.append(contentsOf: utf8) }
      let start = out.count
      out.appendZeros(count: escapedLength(utf8))
      out.withUnsafeMutableBufferPointer { buffer in
        var p = buffer.baseAddress! + start
        writeEscaped(utf8, to: &p)
      }
    }
  }

  /// How many bytes `writeEscaped` writes for `utf8`: the room a line
  /// reserves for it, exactly, so that a long text fills the output's
  /// buffer as a plain one does.
  package static func escapedLength(_ utf8: UnsafeBufferPointer<UInt8>) -> Int {
    guard var s = utf8.baseAddress else { return 0 }
    let end = s + utf8.count
    var length = 0
    while s < end {
      let b = s.pointee
      if b < 0x80 {
        switch b {
        case 0x5C, 0x0A, 0x0D, 0x09: length += 2
        case 0x00..<0x20, 0x7F: length += 4
        default: length += 1
        }
        s += 1
      } else if isC1Control(s, end) {
        length += 8
        s += 2
      } else if isSeparatorOrBidi(s, end) {
        length += 8
        s += 3
      } else {
        length += 1
        s += 1
      }
    }
    return length
  }

  /// `escape`'s bytes for UTF-8 (valid, as every record's text is checked
  /// to be; a lead byte cut short at the end is copied as it is), written
  /// at `p`, which moves past them; room for `escapedLength` bytes. A
  /// text that needs escaping is written without making a `String` of it.
  package static func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, to p: inout UnsafeMutablePointer<UInt8>) {
    guard var s = utf8.baseAddress else { return }
    let end = s + utf8.count
    while s < end {
      let b = s.pointee
      if b < 0x80 {
        switch b {
        case 0x5C: pair(UInt8(ascii: "\\"), to: &p)
        case 0x0A: pair(UInt8(ascii: "n"), to: &p)
        case 0x0D: pair(UInt8(ascii: "r"), to: &p)
        case 0x09: pair(UInt8(ascii: "t"), to: &p)
        case 0x00..<0x20, 0x7F:
          pair(UInt8(ascii: "x"), to: &p)
          p[0] = Hex.digit(b >> 4)
          p[1] = Hex.digit(b)
          p += 2
        default:
          p.pointee = b
          p += 1
        }
        s += 1
      } else if isC1Control(s, end) {
        // U+0080–U+009F: its value is the second byte.
        braced(UInt32(s[1]), to: &p)
        s += 2
      } else if isSeparatorOrBidi(s, end) {
        braced(0x2000 | UInt32(s[1] & 0x3F) << 6 | UInt32(s[2] & 0x3F), to: &p)
        s += 3
      } else {
        p.pointee = b
        p += 1
        s += 1
      }
    }
  }

  /// A C1 control (C2 80–9F) starts at `s`.
  @inline(__always)
  private static func isC1Control(_ s: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
    s[0] == 0xC2 && s + 1 < end && s[1] < 0xA0
  }

  /// U+2028–U+202E (E2 80 A8–AE) or U+2066–U+2069 (E2 81 A6–A9) starts at `s`.
  @inline(__always)
  private static func isSeparatorOrBidi(_ s: UnsafePointer<UInt8>, _ end: UnsafePointer<UInt8>) -> Bool {
    s[0] == 0xE2 && s + 2 < end
      && ((s[1] == 0x80 && (0xA8...0xAE).contains(s[2])) || (s[1] == 0x81 && (0xA6...0xA9).contains(s[2])))
  }

  /// A backslash and `letter`.
  @inline(__always)
  private static func pair(_ letter: UInt8, to p: inout UnsafeMutablePointer<UInt8>) {
    p[0] = UInt8(ascii: "\\")
    p[1] = letter
    p += 2
  }

  /// `\u{hhhh}` for a scalar below U+10000.
  @inline(__always)
  private static func braced(_ value: UInt32, to p: inout UnsafeMutablePointer<UInt8>) {
    pair(UInt8(ascii: "u"), to: &p)
    p[0] = UInt8(ascii: "{")
    p[1] = Hex.digit(UInt8(truncatingIfNeeded: value >> 12))
    p[2] = Hex.digit(UInt8(truncatingIfNeeded: value >> 8))
    p[3] = Hex.digit(UInt8(truncatingIfNeeded: value >> 4))
    p[4] = Hex.digit(UInt8(truncatingIfNeeded: value))
    p[5] = UInt8(ascii: "}")
    p += 6
  }

  /// Whether valid UTF-8 holds no scalar that `escape` changes, from its
  /// bytes: a control, `\`, DEL; C1 controls
  /// (C2 80–9F); U+2028–U+202E (E2 80 A8–AE); U+2066–U+2069 (E2 81 A6–A9).
  package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
    isPlain(utf8, forMessages: false)
  }

  /// Each line of `text` that holds a scalar a terminal would act on (a
  /// control, a bidirectional one) escaped whole; the others, and the line
  /// breaks between them, as they are. For messages put together from what
  /// a user gave that not every part quoted (a path): nothing in them can
  /// reprogram the terminal, whatever a part held.
  package static func escapingControls(_ text: String) -> String {
    var message = text
    guard !message.withUTF8({ isPlain($0, forMessages: true) }) else { return text }
    return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
      var line = String(line)
      return line.withUTF8({ isPlain($0, forMessages: true) }) ? line : escape(line)
    }.joined(separator: "\n")
  }

  /// `isPlain`; `forMessages`, a `\` (a part escaped already) and a
  /// newline (the lines of a message) count as plain.
  private static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>, forMessages: Bool) -> Bool {
    guard var p = utf8.baseAddress else { return true }
    let end = p + utf8.count
    while p < end {
      let b = p.pointee
      if b < 0x7F {
        if b < 0x20 && !(forMessages && b == 0x0A) || b == 0x5C && !forMessages { return false }
      } else if b == 0x7F {
        return false
      } else if isC1Control(p, end) || isSeparatorOrBidi(p, end) {
        return false
      }
      p += 1
    }
    return true
  }

  /// The escaped text in single quotes, for error messages.
  package static func quoted(_ text: String) -> String { "'" + escape(text) + "'" }

  package static func quoted(_ name: StreamName) -> String { quoted(name.text) }

  /// Columns the text takes on a terminal: East Asian wide and fullwidth
  /// characters and emoji take two, combining marks and format characters
  /// (joiners, variation selectors) none, everything else one.
  package static func displayWidth(_ text: String) -> Int {
    var width = 0
    for scalar in text.unicodeScalars { width += columns(scalar) }
    return width
  }

  static func columns(_ scalar: Unicode.Scalar) -> Int {
    let v = scalar.value
    if v < 0x300 { return 1 }  // ASCII and Latin: the common case, without a table
    let properties = scalar.properties
    switch properties.generalCategory {
    case .nonspacingMark, .enclosingMark, .format: return 0
    default: break
    }
    if properties.isEmojiPresentation { return 2 }
    return wideRanges.contains { $0.contains(v) } ? 2 : 1
  }

  /// East Asian Width W and F (Unicode's EastAsianWidth.txt), by block.
  static let wideRanges: [ClosedRange<UInt32>] = [
    0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
    0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
    0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF,
    0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
  ]
}
