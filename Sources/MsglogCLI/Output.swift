import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// Why output could not be written.
public enum OutputError: Error, Equatable, Sendable {
  /// The reader went away (`| head -1`): the command ends quietly.
  case closed
  /// Anything else (a full disk, an I/O error): the command fails.
  case failed(errno: Int32)

  public var description: String {
    switch self {
    case .closed: return "the output was closed"
    case .failed(let code): return String(cString: strerror(code))
    }
  }
}

/// A buffered byte sink for stdout or stderr.
///
/// Output goes out in large writes. Every write to the file descriptor is
/// checked: a full disk or an I/O error throws `OutputError.failed`, a
/// reader that went away throws `.closed` (SIGPIPE is ignored, so a closed
/// pipe shows up as EPIPE), and the stream then refuses further writes so
/// that a long command stops at once. `flush()` is called before an error
/// is reported, so that what was printed comes before the message.
public final class BufferedOutput {
  let fd: Int32?
  /// Pending bytes. A raw buffer rather than an Array: every item of a list
  /// is several writes, and an Array in a class property pays a dynamic
  /// exclusivity check on each.
  private let storage: UnsafeMutablePointer<UInt8>
  private let capacity = 1 << 16
  /// How much of `storage` is pending, and whether a write has failed
  /// (`failure` says how): behind a pointer, as a class's stored `var`s
  /// are checked for exclusive access at every use, several per line.
  private let state: UnsafeMutablePointer<(used: Int, failed: Bool)>
  private var used: Int {
    @inline(__always) get { state.pointee.used }
    @inline(__always) set { state.pointee.used = newValue }
  }
  /// The first failure; every later write throws it again.
  public private(set) var failure: OutputError? {
    didSet { state.pointee.failed = failure != nil }
  }
  /// What a captured stream received (tests and in-process runs).
  public private(set) var captured: [UInt8] = []
  /// Output held back until `release()`, while `holding`.
  private var held: [UInt8] = []
  private var holding = false

  /// Writes to a file descriptor.
  public init(fd: Int32) {
    self.fd = fd
    storage = .allocate(capacity: capacity)
    state = .allocate(capacity: 1)
    state.initialize(to: (0, false))
  }

  /// Captures everything in memory.
  public init() {
    self.fd = nil
    storage = .allocate(capacity: capacity)
    state = .allocate(capacity: 1)
    state.initialize(to: (0, false))
  }

  deinit {
    storage.deallocate()
    state.deallocate()
  }

  public var capturedText: String { String(decoding: captured, as: UTF8.self) }

  func write(_ text: String) throws(OutputError) {
    var text = text
    let result = text.withUTF8 { bytes in
      Result { () throws(OutputError) in try append(UnsafeRawBufferPointer(bytes)) }
    }
    try result.get()
  }

  package func line(_ text: String) throws(OutputError) {
    try write(text)
    try write("\n")
  }

  func write(bytes: UnsafeRawBufferPointer) throws(OutputError) { try append(bytes) }

  /// Lends `body` room for up to `count` bytes at the end of the buffer,
  /// to write in place what it would otherwise copy in; it returns how
  /// many it wrote. (A line longer than the buffer goes through `write`.)
  @inline(__always)
  func writing(upTo count: Int, _ body: (UnsafeMutablePointer<UInt8>) -> Int) throws(OutputError) {
    if state.pointee.failed, let failure { throw failure }
    guard count <= capacity else {
      let line = UnsafeMutablePointer<UInt8>.allocate(capacity: count)
      defer { line.deallocate() }
      let written = body(line)
      precondition(written <= count, "a line wrote past the room it asked for")
      try append(UnsafeRawBufferPointer(start: line, count: written))
      return
    }
    if used + count > capacity { try flush() }
    let written = body(storage + used)
    precondition(written <= count, "a line wrote past the room it asked for")
    used += written
  }

  /// Writes out what `json` holds and empties it (keeping its capacity
  /// and its place in the document).
  func write(json: inout JSONWriter) throws(OutputError) {
    let result = json.bytes.withUnsafeBytes { raw in Result { () throws(OutputError) in try append(raw) } }
    json.removeAll()
    try result.get()
  }

  /// One JSON document and its newline (`streams --json`, `diff --json` …).
  func document(_ body: (inout JSONWriter) -> Void) throws(OutputError) {
    var json = JSONWriter()
    body(&json)
    json.raw("\n")
    try write(json: &json)
  }

  func write(bytes: [UInt8]) throws(OutputError) {
    let result = bytes.withUnsafeBytes { raw in Result { () throws(OutputError) in try append(raw) } }
    try result.get()
  }

  /// For stderr: a message that cannot be shown is dropped, since there is
  /// nowhere left to say so.
  func note(_ text: String) {
    try? line(text)
  }

  private func append(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
    if state.pointee.failed, let failure { throw failure }
    if used + bytes.count > capacity { try flush() }
    if bytes.count > capacity {
      try send(bytes)
      return
    }
    if let base = bytes.baseAddress {
      (storage + used).initialize(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
    }
    used += bytes.count
  }

  /// Writes out what is buffered.
  public func flush() throws(OutputError) {
    if let failure { throw failure }
    guard used > 0 else { return }
    let pending = used
    used = 0
    try send(UnsafeRawBufferPointer(start: storage, count: pending))
  }

  /// Keeps everything written from now on in memory, so that an attempt
  /// that must be run again (`discardHeld`) leaves nothing on the output.
  func hold() {
    holding = true
    held.removeAll()
  }

  /// Drops what was held since `hold()`.
  func discardHeld() {
    used = 0
    held.removeAll()
  }

  /// Writes out what was held and stops holding.
  func release() throws(OutputError) {
    try flush()
    holding = false
    let pending = held
    held.removeAll()
    let result = pending.withUnsafeBytes { bytes in Result { () throws(OutputError) in try send(bytes) } }
    try result.get()
  }

  private func send(_ bytes: UnsafeRawBufferPointer) throws(OutputError) {
    if holding {
      held.append(contentsOf: bytes)
      return
    }
    guard let fd else {
      captured.append(contentsOf: bytes)
      return
    }
    var offset = 0
    while offset < bytes.count {
      let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
      if n < 0 {
        if errno == EINTR { continue }
        let error: OutputError = errno == EPIPE ? .closed : .failed(errno: errno)
        failure = error
        throw error
      }
      offset += n
    }
  }
}

/// How results look on stdout as text; the JSON documents are MsglogWire's
/// (`JSONWriter`), written out through `BufferedOutput.write(json:)`.
enum Format {
  /// Dims a cell on a colour terminal (the short id and the sender).
  static let dim = "\u{1B}[2m"
  static let plain = "\u{1B}[0m"

  /// Writes events as JSON lines (`log --json`, `export`), each into the
  /// output as soon as it is written, through one reused buffer.
  struct EventLineWriter {
    private var json = JSONWriter()

    mutating func write(_ event: Event, to out: BufferedOutput) throws(OutputError) {
      json.event(event)
      json.raw("\n")
      try out.write(json: &json)
    }

    /// A replica's pending change, as the event it is in the local view.
    mutating func write(pending change: UInt64, _ event: Event, undoesChange: UInt64?, to out: BufferedOutput)
      throws(OutputError)
    {
      json.pendingEvent(change, event, undoesChange: undoesChange)
      json.raw("\n")
      try out.write(json: &json)
    }
  }

  /// One event per line: `SEQ  TIME  STREAM  vVERSION  OP  ID  [undoes S]  DETAILS`;
  /// a replica's pending change `pending N  TIME  STREAM  OP  ID  [undoes S | undoes pending M]  DETAILS`.
  static func eventLine(_ event: Event, pending: UInt64? = nil, undoesChange: UInt64? = nil) -> String {
    let where_ = pending.map { "pending \($0)" } ?? "\(event.seq)"
    let version = pending == nil ? "  v\(event.version)" : ""
    var line =
      "\(where_)  \(event.time.rfc3339)  \(TerminalText.escape(event.stream.text))\(version)  "
      + "\(event.opName)  \(event.id.text)"
    if let undoesChange {
      line += "  undoes pending \(undoesChange)"
    } else if let undoes = event.undoes {
      line += "  undoes \(undoes)"
    }
    // An erased insert or edit: `[erased]` where its sender and text were;
    // an unsigned edit: `[erased]` where its sender was.
    var erased = event.erased.map { _ in "-  [erased]" }
    if event.isUnsigned, case .edit(_, let text, _, _, _, _) = event.op {
      erased = "[erased]  \(TerminalText.escape(text))"
    }
    switch event.op {
    case .insert(_, let index, let text, let sender):
      line += "  at \(index)  " + (erased ?? "\(sender.map(TerminalText.escape) ?? "-")  \(TerminalText.escape(text))")
    case .remove:
      break
    case .move(_, let from, let to):
      line += "  \(from) -> \(to)"
    case .edit(_, let text, let sender, _, _, _):
      line += "  " + (erased ?? "\(sender.map(TerminalText.escape) ?? "-")  \(TerminalText.escape(text))")
    case .restore(_, let index, _):
      line += "  at \(index)"
    case .erase(_, let index):
      if let index { line += "  at \(index)" }
    case .unsign(_, let edit):
      line += "  edit \(edit)"
    }
    return line
  }

  static func streamsTable(_ streams: [StreamCounters], to out: BufferedOutput) throws(OutputError) {
    let rows =
      [["STREAM", "ITEMS", "VERSION", "SEQ"]]
      + streams.map { [TerminalText.escape($0.stream.text), String($0.count), String($0.version), String($0.lastSeq)] }
    var widths = [0, 0, 0, 0]
    for row in rows {
      for (i, cell) in row.enumerated() { widths[i] = max(widths[i], TerminalText.displayWidth(cell)) }
    }
    for row in rows {
      var line = padded(row[0], to: widths[0])
      for i in 1..<4 {
        line += "  " + String(repeating: " ", count: widths[i] - TerminalText.displayWidth(row[i])) + row[i]
      }
      try out.line(line)
    }
  }

  /// `- INDEX  SHORTID  SENDER  TEXT` per removal, `+ …` per insertion,
  /// `> FROM -> TO  SHORTID` per move, `~ INDEX  SHORTID  SENDER  TEXT` per
  /// edited item (its new text), in that order.
  /// An item's text as a line shows it: `[erased]` for an item erased since.
  static func shownText(_ item: Item) -> String {
    item.erased == nil ? TerminalText.escape(item.text) : "[erased]"
  }

  static func diffLines(_ diff: StreamDiff, colour: Bool, to out: BufferedOutput) throws(OutputError) {
    for removal in diff.removed {
      try out.write("- \(removal.index)  ")
      try writeIdAndSender(removal.item, colour: colour, to: out)
      try out.line(shownText(removal.item))
    }
    for insertion in diff.inserted {
      try out.write("+ \(insertion.index)  ")
      try writeIdAndSender(insertion.item, colour: colour, to: out)
      try out.line(shownText(insertion.item))
    }
    for move in diff.moved {
      try out.write("> \(move.from) -> \(move.to)  ")
      if colour { try out.write(dim) }
      try out.write(move.id.short)
      if colour { try out.write(plain) }
      try out.write("\n")
    }
    for reload in diff.edited {
      try out.write("~ \(reload.index)  ")
      try writeIdAndSender(reload.item, colour: colour, to: out)
      try out.line(shownText(reload.item))
    }
  }
}
