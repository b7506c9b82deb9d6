import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// The lines of a list of items (`list`, `replay`, their `--json`).
extension Format {
  /// Writes `INDEX  SHORTID  SENDER  TEXT` lines through one reused buffer:
  /// no String per line or per field, which matters for a list of a
  /// million items. A line whose text and sender need no escaping (nearly
  /// every one) is written field by field through a pointer, with no
  /// bounds check or growth per byte; `list` spends a third of its
  /// instructions here.
  final class ItemLineWriter {
    /// Digits of the widest index, to right-align the others.
    private(set) var width = 1
    let colour: Bool
    private var scratch: [UInt8] = []
    private var line: UnsafeMutablePointer<UInt8>
    private var capacity = 256

    /// Indexes aligned for one item until `align(count:)` says how many.
    init(colour: Bool) {
      self.colour = colour
      line = .allocate(capacity: capacity)
    }

    /// Aligns the indexes of a list of `count` items (known once its
    /// header is read).
    func align(count: Int) {
      var digits = 1
      var rest = max(count - 1, 0)
      while rest >= 10 {
        digits += 1
        rest /= 10
      }
      width = digits
    }

    deinit { line.deallocate() }

    func write(_ item: Item, index: Int, to out: BufferedOutput) throws(OutputError) {
      // An erased item (a past list, `replay --at`): the mark, not an empty text.
      let shown = item.erased == nil ? item.text : "[erased]"
      if !colour {
        var text = shown
        var sender = item.sender ?? "-"
        let written = text.withUTF8 { text in
          sender.withUTF8 { sender in
            TerminalText.isPlain(text) && TerminalText.isPlain(sender)
              ? writeLine(item.id, index: index, sender: sender, text: text) : nil
          }
        }
        if let written {
          try out.write(bytes: UnsafeRawBufferPointer(start: line, count: written))
          return
        }
      }
      scratch.removeAll(keepingCapacity: true)
      let start = scratch.count
      JSONWriter.appendDecimal(UInt64(index), to: &scratch)
      let digits = scratch.count - start
      if digits < width {
        scratch.insert(contentsOf: repeatElement(UInt8(ascii: " "), count: width - digits), at: start)
      }
      scratch.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: " ")])
      Format.appendIdAndSender(item, colour: colour, to: &scratch)
      TerminalText.appendEscaped(shown, to: &scratch)
      scratch.append(UInt8(ascii: "\n"))
      try out.write(bytes: scratch)
    }

    /// The same line for an item lent as bytes, written in place in the
    /// output's buffer straight from the record's bytes (escaped there when
    /// it needs it); a coloured or erased one through `write(_:Item…)`.
    func write(_ item: ItemBytes, index: Int, to out: BufferedOutput) throws(OutputError) {
      guard !colour, item.erased == nil else { return try write(item.item, index: index, to: out) }
      let text = item.text.assumingMemoryBound(to: UInt8.self)
      let sender = item.sender?.assumingMemoryBound(to: UInt8.self)
      if TerminalText.isPlain(text), sender.map(TerminalText.isPlain) ?? true {
        let size = max(width, 20) + 14 + (sender?.count ?? 1) + text.count + 1
        try out.writing(upTo: size) { line in
          writeLine(item.id, index: index, sender: sender, text: text, escaping: false, at: line)
        }
      } else {
        let escaped = TerminalText.escapedLength(text) + (sender.map(TerminalText.escapedLength) ?? 1)
        let size = max(width, 20) + 14 + escaped + 1
        try out.writing(upTo: size) { line in
          writeLine(item.id, index: index, sender: sender, text: text, escaping: true, at: line)
        }
      }
    }

    /// The line of an item whose text and sender are printed as they are,
    /// in `line`; its length.
    private func writeLine(
      _ id: ItemID, index: Int, sender: UnsafeBufferPointer<UInt8>, text: UnsafeBufferPointer<UInt8>
    ) -> Int {
      // Index (at most 19 digits), spaces, id, sender, text, newline.
      let size = max(width, 20) + 14 + sender.count + text.count + 1
      if size > capacity {
        line.deallocate()
        capacity = max(size, capacity * 2)
        line = .allocate(capacity: capacity)
      }
      return writeLine(id, index: index, sender: sender, text: text, escaping: false, at: line)
    }

    /// Writes the line at `line` (room for the index's digits or 20, 14,
    /// the sender, the text and a newline, the last three escaped when
    /// `escaping`); returns its length.
    @inline(__always)
    private func writeLine(
      _ id: ItemID, index: Int, sender: UnsafeBufferPointer<UInt8>?, text: UnsafeBufferPointer<UInt8>,
      escaping: Bool, at line: UnsafeMutablePointer<UInt8>
    ) -> Int {
      let digits = Self.digits(index)
      var p = line
      while digits + (p - line) < width {
        p.pointee = UInt8(ascii: " ")
        p += 1
      }
      Self.writeDecimal(index, digits: digits, at: p)
      p += digits
      p[0] = UInt8(ascii: " ")
      p[1] = UInt8(ascii: " ")
      id.writeShort(into: p + 2)
      p[10] = UInt8(ascii: " ")
      p[11] = UInt8(ascii: " ")
      p += 12
      if let sender {
        if escaping { TerminalText.writeEscaped(sender, to: &p) } else { Self.copy(sender, to: &p) }
      } else {
        p.pointee = UInt8(ascii: "-")
        p += 1
      }
      p[0] = UInt8(ascii: " ")
      p[1] = UInt8(ascii: " ")
      p += 2
      if escaping { TerminalText.writeEscaped(text, to: &p) } else { Self.copy(text, to: &p) }
      p.pointee = UInt8(ascii: "\n")
      p += 1
      return p - line
    }

    /// How many decimal digits `n` (≥ 0) has.
    @inline(__always)
    static func digits(_ n: Int) -> Int {
      var digits = 1
      var bound = 10
      while n >= bound && digits < 19 {
        digits += 1
        bound &*= 10
      }
      return digits
    }

    /// `n` in decimal, `digits` long, at `p`: two digits a step from a table.
    @inline(__always)
    static func writeDecimal(_ n: Int, digits: Int, at p: UnsafeMutablePointer<UInt8>) {
      let pairs = Self.pairs.utf8Start
      var v = n
      var q = p + digits
      while v >= 10 {
        let pair = (v % 100) &* 2
        v /= 100
        q -= 2
        q[0] = pairs[pair]
        q[1] = pairs[pair + 1]
      }
      if q > p { p[0] = UInt8(truncatingIfNeeded: v) &+ 0x30 }
    }

    /// "00" to "99", for two digits at a time (in the binary: no lazy global).
    /// The line writer's own, as `digits` and `writeDecimal` are: through
    /// `DecimalDigits`, in another module, neither was inlined, and `list`
    /// of automerge-paper ran 0.6 M instructions more.
    private static var pairs: StaticString {
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
    }

    /// Copies `bytes` to `p` and moves `p` past them: a short run (a
    /// sender, a word) byte by byte, where a call to memcpy costs more.
    @inline(__always)
    private static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to p: inout UnsafeMutablePointer<UInt8>) {
      guard let base = bytes.baseAddress else { return }
      if bytes.count <= 16 {
        for k in 0..<bytes.count { p[k] = base[k] }
      } else {
        p.initialize(from: base, count: bytes.count)
      }
      p += bytes.count
    }
  }

  /// `SHORTID  SENDER  `, dimmed on a colour terminal.
  static func writeIdAndSender(_ item: Item, colour: Bool, to out: BufferedOutput) throws(OutputError) {
    var bytes: [UInt8] = []
    appendIdAndSender(item, colour: colour, to: &bytes)
    try out.write(bytes: bytes)
  }

  static func appendIdAndSender(_ item: Item, colour: Bool, to out: inout [UInt8]) {
    if colour { out.append(contentsOf: dim.utf8) }
    item.id.appendShort(to: &out)
    out.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: " ")])
    if let sender = item.sender {
      TerminalText.appendEscaped(sender, to: &out)
    } else {
      out.append(UInt8(ascii: "-"))
    }
    if colour { out.append(contentsOf: plain.utf8) }
    out.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: " ")])
  }
}
