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
    if !text.unicodeScalars.contains(where: needsEscape) { return text }
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      switch scalar.value {
      case 0x5C: out.append(contentsOf: "\\\\".unicodeScalars)
      case 0x0A: out.append(contentsOf: "\\n".unicodeScalars)
      case 0x0D: out.append(contentsOf: "\\r".unicodeScalars)
      case 0x09: out.append(contentsOf: "\\t".unicodeScalars)
      case 0x00..<0x20, 0x7F:
        out.append(contentsOf: ("\\x" + Hex.text(scalar.value, width: 2)).unicodeScalars)
      case _ where needsEscape(scalar):
        out.append(contentsOf: ("\\u{" + Hex.text(scalar.value, width: 4) + "}").unicodeScalars)
      default: out.append(scalar)
      }
    }
    return String(out)
  }

  /// `escape(text)` appended as bytes; text that needs no escaping (the
  /// usual message, in any script) is copied without looking at its scalars.
  package static func appendEscaped(_ text: String, to out: inout [UInt8]) {
    var text = text
    let plain = text.withUTF8 { utf8 -> Bool in
      guard isPlain(utf8) else { return false }
      out.append(contentsOf: utf8)
      return true
    }
    if !plain { out.append(contentsOf: escape(text).utf8) }
  }

  /// Whether valid UTF-8 holds no scalar that `escape` changes
  /// (`needsEscape`), from its bytes: a control, `\`, DEL; C1 controls
  /// (C2 80–9F); U+2028–U+202E (E2 80 A8–AE); U+2066–U+2069 (E2 81 A6–A9).
  package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
    guard var p = utf8.baseAddress else { return true }
    let end = p + utf8.count
    while p < end {
      let b = p.pointee
      if b < 0x7F {
        if b < 0x20 || b == 0x5C { return false }
      } else if b == 0x7F {
        return false
      } else if b == 0xC2 {
        // Valid UTF-8: a lead byte is followed by its continuation bytes.
        if p[1] < 0xA0 { return false }
      } else if b == 0xE2 {
        let (b1, b2) = (p[1], p[2])
        if b1 == 0x80, (0xA8...0xAE).contains(b2) { return false }
        if b1 == 0x81, (0xA6...0xA9).contains(b2) { return false }
      }
      p += 1
    }
    return true
  }

  /// The escaped text in single quotes, for error messages.
  package static func quoted(_ text: String) -> String { "'" + escape(text) + "'" }

  package static func quoted(_ name: StreamName) -> String { quoted(name.text) }

  static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    let v = scalar.value
    return v < 0x20 || v == 0x5C || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
      || (0x202A...0x202E).contains(v) || (0x2066...0x2069).contains(v)
  }

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
