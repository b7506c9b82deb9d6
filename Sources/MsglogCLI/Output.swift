import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A buffered byte sink for stdout or stderr.
///
/// Output goes out in large writes; `flush()` is called before an error is
/// reported, so that what was printed comes before the message.
public final class OutputStream {
  let fd: Int32?
  /// Pending bytes. A raw buffer rather than an Array: every item of a list
  /// is several writes, and an Array in a class property pays a dynamic
  /// exclusivity check on each.
  private let storage: UnsafeMutablePointer<UInt8>
  private let capacity = 1 << 16
  private var used = 0
  /// What a captured stream received (tests and in-process runs).
  public private(set) var captured: [UInt8] = []

  /// Writes to a file descriptor.
  public init(fd: Int32) {
    self.fd = fd
    storage = .allocate(capacity: capacity)
  }

  /// Captures everything in memory.
  public init() {
    self.fd = nil
    storage = .allocate(capacity: capacity)
  }

  deinit { storage.deallocate() }

  public var capturedText: String { String(decoding: captured, as: UTF8.self) }

  func write(_ text: String) {
    let done: Void? = text.utf8.withContiguousStorageIfAvailable { append(UnsafeRawBufferPointer($0)) }
    if done == nil { append(Array(text.utf8)) }
  }

  func line(_ text: String) {
    write(text)
    write("\n")
  }

  private func append(_ bytes: [UInt8]) {
    bytes.withUnsafeBytes { append($0) }
  }

  private func append(_ bytes: UnsafeRawBufferPointer) {
    if used + bytes.count > capacity { flush() }
    if bytes.count > capacity {
      send(bytes)
      return
    }
    if let base = bytes.baseAddress { (storage + used).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count) }
    used += bytes.count
  }

  public func flush() {
    guard used > 0 else { return }
    send(UnsafeRawBufferPointer(start: storage, count: used))
    used = 0
  }

  private func send(_ bytes: UnsafeRawBufferPointer) {
    guard let fd else {
      captured.append(contentsOf: bytes)
      return
    }
    var offset = 0
    while offset < bytes.count {
      let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if n < 0 {
        if errno == EINTR { continue }
        return  // EPIPE and the like: the reader is gone; nothing useful to do.
      }
      offset += n
    }
  }
}

/// How results look on stdout, in text and in JSON (SPEC.md's shapes).
enum Format {
  /// `INDEX  SHORTID  SENDER  TEXT`, index right-aligned to the widest in the list.
  static func itemLines(_ snapshot: StreamSnapshot, to out: OutputStream) {
    let width = String(max(snapshot.items.count - 1, 0)).count
    for (index, item) in snapshot.items.enumerated() {
      writeItemLine(item, index: index, width: width, to: out)
    }
  }

  /// Appends one `INDEX  SHORTID  SENDER  TEXT` line piece by piece: no
  /// intermediate strings, which matters for a list of a million items.
  static func writeItemLine(_ item: Item, index: Int, width: Int, to out: OutputStream) {
    let number = String(index)
    for _ in 0..<max(0, width - number.utf8.count) { out.write(" ") }
    out.write(number)
    out.write("  ")
    out.write(item.id.short)
    out.write("  ")
    out.write(item.sender.map(TerminalText.escape) ?? "-")
    out.write("  ")
    out.write(TerminalText.escape(item.text))
    out.write("\n")
  }

  static func snapshotJSON(_ snapshot: StreamSnapshot) -> String {
    var out = snapshotJSONHead(snapshot, count: snapshot.items.count)
    for (index, item) in snapshot.items.enumerated() {
      out += (index > 0 ? "," : "") + itemJSON(item, index: index)
    }
    return out + "]}"
  }

  /// The document up to the opening bracket of `items`, so that items can follow one by one.
  static func snapshotJSONHead(_ snapshot: StreamSnapshot, count: Int) -> String {
    var doc = JSONObjectWriter()
    doc.add("stream", snapshot.stream)
    doc.add("seq", snapshot.seq)
    doc.add("version", snapshot.version)
    doc.add("count", count)
    return doc.text + ",\"items\":["
  }

  static func itemJSON(_ item: Item, index: Int) -> String {
    var o = JSONObjectWriter()
    o.add("index", index)
    o.add("id", item.id.text)
    o.add("text", item.text)
    if let sender = item.sender { o.add("sender", sender) }
    o.add("time", item.time.rfc3339)
    o.add("seq", item.seq)
    return o.close()
  }

  /// One event per line: `SEQ  TIME  STREAM  vVERSION  OP  ID  DETAILS`.
  static func eventLine(_ event: Event) -> String {
    var line =
      "\(event.seq)  \(event.time.rfc3339)  \(TerminalText.escape(event.stream))  v\(event.version)  "
      + "\(event.opName)  \(event.id.text)"
    switch event.op {
    case .insert(_, let index, let text, let sender):
      line += "  at \(index)  \(sender.map(TerminalText.escape) ?? "-")  \(TerminalText.escape(text))"
    case .remove:
      break
    case .move(_, let from, let to):
      line += "  \(from) -> \(to)"
    }
    return line
  }

  /// What a write prints: the new id, `moved …`, `removed …`, or the JSON object.
  static func outcome(_ outcome: Outcome, json: Bool) -> String {
    let event = outcome.event
    if json {
      var o = JSONObjectWriter()
      o.add("seq", event.seq)
      o.add("stream", event.stream)
      o.add("version", event.version)
      o.add("id", event.id.text)
      switch event.op {
      case .insert, .remove: o.add("index", outcome.index)
      case .move(_, let from, let to):
        o.add("from", from)
        o.add("to", to)
      }
      return o.close()
    }
    switch event.op {
    case .insert: return event.id.text
    case .remove: return "removed \(event.id.text)"
    case .move(_, let from, let to): return "moved \(event.id.text) \(from) -> \(to)"
    }
  }

  static func streamsTable(_ heads: [StreamHead], to out: OutputStream) {
    let rows =
      [["STREAM", "ITEMS", "VERSION", "SEQ"]]
      + heads.map { [TerminalText.escape($0.stream), String($0.count), String($0.version), String($0.lastSeq)] }
    var widths = [0, 0, 0, 0]
    for row in rows {
      for (i, cell) in row.enumerated() { widths[i] = max(widths[i], cell.count) }
    }
    for row in rows {
      var line = padded(row[0], to: widths[0])
      for i in 1..<4 {
        line += "  " + String(repeating: " ", count: widths[i] - row[i].count) + row[i]
      }
      out.line(line)
    }
  }

  static func streamsJSON(_ heads: [StreamHead]) -> String {
    let rows = heads.map { head -> String in
      var o = JSONObjectWriter()
      o.add("stream", head.stream)
      o.add("count", head.count)
      o.add("version", head.version)
      o.add("seq", head.lastSeq)
      return o.close()
    }
    return "{\"streams\":[" + rows.joined(separator: ",") + "]}"
  }
}
