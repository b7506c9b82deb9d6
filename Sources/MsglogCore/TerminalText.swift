/// Escapes text for a terminal, so that a message can neither reprogram it
/// nor split its line.
///
/// `\` → `\\`, newline → `\n`, carriage return → `\r`, tab → `\t`, other C0
/// controls and DEL → `\xhh`, C1 controls and U+2028/U+2029 → `\u{hhhh}`.
public enum TerminalText {
  public static func escape(_ text: String) -> String {
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
        out.append(contentsOf: ("\\x" + hex(scalar.value, width: 2)).unicodeScalars)
      case 0x80...0x9F, 0x2028, 0x2029:
        out.append(contentsOf: ("\\u{" + hex(scalar.value, width: 4) + "}").unicodeScalars)
      default: out.append(scalar)
      }
    }
    return String(out)
  }

  /// The escaped text in single quotes, for error messages.
  public static func quoted(_ text: String) -> String { "'" + escape(text) + "'" }

  public static func quoted(_ name: StreamName) -> String { quoted(name.text) }

  static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    let v = scalar.value
    return v < 0x20 || v == 0x5C || (0x7F...0x9F).contains(v) || v == 0x2028 || v == 0x2029
  }

  static func hex(_ value: UInt32, width: Int) -> String {
    let s = String(value, radix: 16)
    return String(repeating: "0", count: max(0, width - s.count)) + s
  }
}
