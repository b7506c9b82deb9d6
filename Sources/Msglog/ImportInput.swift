import CByteScan
import MsglogCore
import MsglogLMDB
import MsglogPostgres

#if canImport(Glibc)
  import Glibc
#endif

/// Where an import's lines come from: bytes in memory (standard input, an
/// app's array), or a file, read a block at a time and never held whole.
package enum ImportInput: @unchecked Sendable {
  /// Bytes that outlive the import (a UTF-8 byte-order mark at the start is skipped).
  case memory(UnsafeRawBufferPointer)
  /// A regular file, read with `pread` from where its offset stood when the
  /// import began (the offset is moved past what was read once it is
  /// over), `shown` as its name in errors. `end`, fixed before the first
  /// pass (`endFixed`, or where the measuring pass found it): where the
  /// file ended then, so that every pass over it reads the same bytes
  /// however it grows.
  case file(descriptor: Int32, shown: String, end: Int? = nil)

  /// Longer than any import line can be (a text of 1 MiB escaped as
  /// `\uXXXX` throughout is 6 MiB): refused as soon as it is seen, not
  /// once it is read whole.
  package static let maximumLineBytes = 16 << 20

  /// The error for a line past `maximumLineBytes`.
  package static func lineTooLong(_ number: Int) -> MsglogError {
    .line(number, .invalidInput(.write("the line is longer than 16 MiB, which no import line can be")))
  }

  /// What a pass over the input found, before anything is performed.
  package struct Measure {
    /// The input, a file's end fixed where the pass found it.
    package var input: ImportInput
    /// How many lines it holds (the last may lack its newline): what the
    /// import's progress counts to.
    package var lines = 0
    /// How many of them are not blank: the most events the import can
    /// append, which the bulk build makes room for (blank lines take none).
    package var requests = 0
    /// Every line is blank: there is nothing to do.
    package var blank: Bool { requests == 0 }
    /// A line names what only the ledger performs (an edit, a restore, an
    /// undo, an exported undo or replica change), so the bulk build is
    /// not tried: it would give way there, its work thrown away. Found by
    /// the bytes of the keys (`"op": "edit"`, `"undoes":`, `"origin":`),
    /// which no string's content can hold unescaped; a line that spells
    /// them otherwise still gives way, only later.
    package var needsLedger = false
  }

  /// How much the measuring pass reads at a time: it only counts lines,
  /// so a small buffer, staying in the cache and costing a few page
  /// faults where a parsed piece's mebibyte costs hundreds.
  static let measuringBlockBytes = 1 << 16

  /// Reads the whole input once (a file in blocks, as an import does).
  package func measure() throws(MsglogError) -> Measure {
    let blocks = ImportLineReader.Blocks(self, blockBytes: Self.measuringBlockBytes)
    var measure = Measure(input: self)
    while let (block, _) = try blocks.next() {
      var start = 0
      while start < block.count {
        let end = ImportLine.endOfLine(block, from: start)
        measure.lines += 1
        if !ImportLine.isBlank(UnsafeRawBufferPointer(rebasing: block[start..<end])) { measure.requests += 1 }
        start = end + 1
      }
      if !measure.needsLedger { measure.needsLedger = Self.namesLedgerOnly(block) }
    }
    if case .file(let fd, let shown, _) = self { measure.input = .file(descriptor: fd, shown: shown, end: blocks.end) }
    return measure
  }

  /// Whether `block` holds a key `"undoes"` or `"origin"`, or `"op"` with
  /// the value `"edit"`, `"restore"` or `"undo"`. Every word looked for
  /// starts with a quote and `u` or `o`: the block is scanned sixteen bytes
  /// at a time for that pair (`msglog_next_quote_before_u_or_o`, SSE2; the
  /// word-at-a-time loop before it was a thirteenth of a short import's
  /// building thread, whose build waits for this pass),
  /// and only where a word may hold one is it looked at (a line has one,
  /// its `"op"`).
  static func namesLedgerOnly(_ block: UnsafeRawBufferPointer) -> Bool {
    guard let base = block.baseAddress else { return false }
    var at = msglog_next_quote_before_u_or_o(base, block.count, 0)
    while at < block.count {
      if ledgerWordStarts(at: at, in: block) { return true }
      at = msglog_next_quote_before_u_or_o(base, block.count, at + 1)
    }
    return false
  }

  /// Whether a word `namesLedgerOnly` looks for starts at `at`.
  private static func ledgerWordStarts(at: Int, in block: UnsafeRawBufferPointer) -> Bool {
    guard at + 1 < block.count, block[at] == UInt8(ascii: "\""),
      block[at + 1] == UInt8(ascii: "u") || block[at + 1] == UInt8(ascii: "o"), let base = block.baseAddress
    else { return false }
    func starts(_ word: StaticString, at offset: Int) -> Bool {
      offset + word.utf8CodeUnitCount <= block.count
        && memcmp(base + offset, word.utf8Start, word.utf8CodeUnitCount) == 0
    }
    /// Past `offset`: optional space, a colon, optional space; where the value starts, if it is a key.
    func value(after offset: Int) -> Int? {
      var at = offset
      func skipSpace() { while at < block.count, [0x20, 0x09, 0x0D].contains(block[at]) { at += 1 } }
      skipSpace()
      guard at < block.count, block[at] == UInt8(ascii: ":") else { return nil }
      at += 1
      skipSpace()
      return at
    }
    if starts("\"undoes\"", at: at), value(after: at + 8) != nil { return true }
    if starts("\"origin\"", at: at), value(after: at + 8) != nil { return true }
    if starts("\"op\"", at: at), let v = value(after: at + 4),
      starts("\"edit\"", at: v) || starts("\"restore\"", at: v) || starts("\"undo\"", at: v)
    {
      return true
    }
    return false
  }

  /// Where a piped import may be copied while it is read, in order: the
  /// directory that holds (or will hold) the LMDB database at `location`,
  /// on its disk; then `temporary` (`TMPDIR`), else `/tmp`.
  package static func spoolDirectories(for location: String, temporary: String?) -> [String] {
    let fallback = temporary.flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
    return PostgresLocation.isPostgres(location) ? [fallback] : [DatabaseFiles.parent(of: location), fallback]
  }

  /// Opens the import file at `path` for reading, or says why it cannot be read.
  package static func open(_ path: String) throws(MsglogError) -> Int32 {
    let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else {
      let reason = errno == ENOENT ? "no such file" : systemMessage(errno)
      throw .cannotReadInput("cannot read \(path): \(reason)")
    }
    var info = stat()
    if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
      close(fd)
      throw .cannotReadInput("cannot read \(path): it is a directory")
    }
    return fd
  }

  /// A regular file's end fixed where it is now (every other input as it is).
  func endFixed() -> ImportInput {
    guard case .file(let fd, let shown, nil) = self else { return self }
    var info = stat()
    guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return self }
    return .file(descriptor: fd, shown: shown, end: Int(info.st_size))
  }

  /// Whether `fd` is a regular file, which an import reads with `pread`.
  package static func isRegularFile(_ fd: Int32) -> Bool {
    var info = stat()
    return fstat(fd, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
  }
}

/// Reads a descriptor to its end.
///
/// A regular file (or stdin redirected from one) is read straight into an
/// array of its size: an import of tens of megabytes is then one copy
/// instead of a chunk at a time into an array that keeps growing.
package func readDescriptor(_ fd: Int32, what: String) throws(MsglogError) -> [UInt8] {
  var out: [UInt8] = []
  var info = stat()
  let position = lseek(fd, 0, SEEK_CUR)
  if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, position >= 0, info.st_size > position {
    // One more byte than the file holds: reading it finds the end (or a file that grew).
    let size = Int(info.st_size - position) + 1
    var failure: Int32 = 0
    out = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
      while count < size {
        let n = Glibc.read(fd, buffer.baseAddress! + count, size - count)
        if n < 0, errno == EINTR { continue }
        if n < 0 { failure = errno }
        if n <= 0 { return }
        count += n
      }
    }
    if failure != 0 { throw MsglogError.cannotReadInput("cannot read \(what): \(systemMessage(failure))") }
    if out.count < size { return out }
  }
  var chunk = [UInt8](repeating: 0, count: 1 << 16)
  while true {
    let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    if n < 0 {
      if errno == EINTR { continue }
      throw MsglogError.cannotReadInput("cannot read \(what): \(systemMessage(errno))")
    }
    if n == 0 { return out }
    out.append(contentsOf: chunk[0..<n])
  }
}
