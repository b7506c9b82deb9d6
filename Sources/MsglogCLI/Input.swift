import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// Where a command reads its message text or import lines from.
public protocol InputSource {
  /// Everything, to the end.
  func readAll() throws -> [UInt8]
  /// Whether a person is typing (to say how to end the input).
  var isTerminal: Bool { get }
  /// The descriptor, when the input is a regular file (stdin redirected
  /// from one): an import then reads it a block at a time, as a file named
  /// on the command line, instead of holding it whole.
  var regularFile: Int32? { get }
  /// The whole input copied into a temporary file in `directory` (made
  /// with `O_TMPFILE`: it has no name, and goes with its descriptor, even
  /// when the process is killed), read from its start; nil when none
  /// can be made there. A pipe is read once, but an import may read its
  /// lines twice (the bulk build giving way to the ledger), and a pipe's
  /// bytes held in memory are as large as the import's input.
  func spool(in directory: String) throws -> Spool?
}

extension InputSource {
  public var regularFile: Int32? { nil }
  public func spool(in directory: String) throws -> Spool? { nil }
}

/// The process's stdin.
public struct StandardInput: InputSource {
  public init() {}

  public var isTerminal: Bool { isatty(0) == 1 }

  public func readAll() throws -> [UInt8] {
    try checkOpen()
    return try readDescriptor(0, what: "stdin")
  }

  public var regularFile: Int32? { ImportInput.isRegularFile(0) ? 0 : nil }

  public func spool(in directory: String) throws -> Spool? {
    try checkOpen()
    return try spoolIntoTemporaryFile(from: 0, what: "stdin", in: directory)
  }

  /// Refuses a closed stdin, said as such: it is held by /dev/null opened
  /// for writing (`setUpProcess`), whose read fails "bad file descriptor".
  private func checkOpen() throws {
    guard !MsglogCLI.isClosed(0) else { throw MsglogError.cannotReadInput("cannot read stdin: it is closed") }
  }
}

/// Follows the lines of a pipe being copied: their number, the bytes of
/// the one in progress, and the first until it is whole (nil once checked).
private func checkLines(
  _ bytes: ArraySlice<UInt8>, firstLine: inout [UInt8]?, line: inout Int, lineBytes: inout Int
) throws {
  // A trimmed log's export begins with its bases, lines of any length
  // that the import reads whole (`ImportedBase`): no check to make early.
  if line == 0 { return }
  if let first = firstLine, first.count + bytes.count >= 16 || bytes.contains(0x0A) {
    let start = Array((first + bytes.prefix(16)).prefix(16))
    if start.withUnsafeBytes({ ImportedBase.isBaseLine($0) }) {
      line = 0
      firstLine = nil
      return
    }
  }
  var rest = bytes[...]
  while let newline = rest.firstIndex(of: 0x0A) {
    if firstLine != nil {
      firstLine! += rest[..<newline]
      if line == 1, firstLine!.starts(with: [0xEF, 0xBB, 0xBF]) { firstLine!.removeFirst(3) }
      if !firstLine!.withUnsafeBytes({ ImportLine.isBlank($0) }) {
        do {
          _ = try ImportLine.parse(firstLine!, defaultStream: .main)
        } catch {
          throw MsglogError.line(line, error)
        }
        firstLine = nil
      } else {
        firstLine = []
      }
    }
    line += 1
    lineBytes = 0
    rest = rest[(newline + 1)...]
  }
  if firstLine != nil { firstLine! += rest }
  lineBytes += rest.count
  if lineBytes > ImportInput.maximumLineBytes { throw ImportInput.lineTooLong(line) }
}

/// Where a pipe's bytes were kept (`spoolIntoTemporaryFile`).
public enum Spool {
  /// A temporary file, positioned at its start, which the caller closes.
  case file(Int32)
  /// In memory: the temporary file could not hold them (a full disk).
  case memory([UInt8])
}

/// What `fd` (a pipe) holds to its end, copied into a temporary file in
/// `directory` made with `O_TMPFILE` (no name: it goes with its
/// descriptor, even when the process is killed); nil when no such file
/// can be made there (nothing was read then). When writing it fails part
/// way (the disk full), what was kept is read back and the rest of the
/// pipe read into memory: what was read cannot be read again.
func spoolIntoTemporaryFile(from fd: Int32, what: String, in directory: String) throws -> Spool? {
  // O_TMPFILE, which Glibc's module does not export: __O_TMPFILE | O_DIRECTORY.
  let spool = open(directory, 0o20_000_000 | O_DIRECTORY | O_RDWR | O_CLOEXEC, 0o600)
  guard spool >= 0 else { return nil }
  var buffer = [UInt8](repeating: 0, count: 1 << 20)
  var kept = 0
  // What would end the import anyway ends the copy at once, before it
  // fills a disk: a first line that does not parse (`yes garbage |`), a
  // line longer than any import line (`/dev/zero`).
  var firstLine: [UInt8]? = []
  var line = 1
  var lineBytes = 0
  while true {
    let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    if n < 0, errno == EINTR { continue }
    if n < 0 {
      let reason = systemMessage(errno)
      close(spool)
      throw MsglogError.cannotReadInput("cannot read \(what): \(reason)")
    }
    if n == 0 { break }
    do {
      try checkLines(buffer[..<n], firstLine: &firstLine, line: &line, lineBytes: &lineBytes)
    } catch {
      close(spool)
      throw error
    }
    var written = 0
    while written < n {
      let w = buffer.withUnsafeBytes { Glibc.write(spool, $0.baseAddress! + written, n - written) }
      if w < 0, errno == EINTR { continue }
      if w <= 0 {
        defer { close(spool) }
        var bytes = [UInt8](repeating: 0, count: kept + written)
        let back = bytes.withUnsafeMutableBytes { pread(spool, $0.baseAddress, $0.count, 0) }
        guard back == bytes.count else { throw MsglogError.cannotReadInput("cannot read \(what) back") }
        bytes += buffer[written..<n]
        bytes += try readDescriptor(fd, what: what)
        return .memory(bytes)
      }
      written += w
    }
    kept += n
  }
  lseek(spool, 0, SEEK_SET)
  return .file(spool)
}

/// Message text from stdin and files, by the rules in docs/REFERENCE.md.
enum InputText {
  /// All of stdin as one message, less one trailing newline (`\n` or `\r\n`).
  static func whole(_ bytes: [UInt8]) throws -> String {
    var bytes = bytes
    if bytes.last == 0x0A {
      bytes.removeLast()
      // A Windows line end is one newline too.
      if bytes.last == 0x0D { bytes.removeLast() }
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw CommandLineError.usage("the message on stdin is not valid UTF-8")
    }
    return text
  }

  /// One message per non-blank line, with its line number; a trailing `\r`
  /// is dropped from each.
  static func lines(_ bytes: [UInt8]) throws -> [(text: String, line: Int)] {
    var texts: [(text: String, line: Int)] = []
    var number = 0
    for var line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
      number += 1
      if line.last == 0x0D { line.removeLast() }
      if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
      guard let text = String(validating: line, as: UTF8.self) else {
        throw CommandLineError.usage("line \(number) of stdin is not valid UTF-8")
      }
      // Bad input, as the same text given once is (exit 64), not a
      // refused line: checked before the log is opened.
      guard line.count <= Limits.maxTextBytes else {
        throw CommandLineError.usage("line \(number): \(InvalidInput.textTooLong(bytes: line.count))")
      }
      texts.append((text, number))
    }
    guard !texts.isEmpty else {
      throw CommandLineError.usage("--lines found no message on stdin (every line is blank)")
    }
    return texts
  }
}
