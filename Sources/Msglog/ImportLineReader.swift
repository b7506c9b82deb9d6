import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// Where an import's lines come from: bytes in memory (standard input, an
/// app's array), or a file, read a block at a time and never held whole.
package enum ImportInput: @unchecked Sendable {
  /// Bytes that outlive the import (a UTF-8 byte-order mark at the start is skipped).
  case memory(UnsafeRawBufferPointer)
  /// An open file, read from its start with `pread` (the reader never
  /// moves its offset), `shown` as its name in errors.
  case file(descriptor: Int32, shown: String)

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

  /// What `fd` holds from where it is to its end.
  package static func readAll(_ fd: Int32, shown: String) throws(MsglogError) -> [UInt8] {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
      if n < 0, errno == EINTR { continue }
      guard n >= 0 else { throw .cannotReadInput("cannot read \(shown): \(systemMessage(errno))") }
      if n == 0 { return bytes }
      bytes += chunk[..<n]
    }
  }
}

/// An import's lines parsed into requests a piece at a time — about a
/// mebibyte of lines each — on a thread of its own, a few pieces ahead of
/// the caller, who performs each piece while the next is parsed: the
/// import holds a few pieces' requests, never the whole input's (a 52 MB
/// file's requests took 300 MB), and parsing, a third of an import into
/// an empty database, overlaps the build.
///
/// Lines are numbered from 1 in the whole input, blank lines skipped (and
/// counted). A line that does not parse ends the pieces: `next` throws
/// `MsglogError.line` once the lines before it have all been handed out,
/// so that the first line that fails, for whatever reason, is the one named.
///
/// `stop` (or reaching the end) must come before the input's bytes go away.
package final class ImportLineReader: @unchecked Sendable {
  /// The requests of consecutive lines, with the number of the line each came from.
  package struct Piece {
    package var requests: [WriteRequest] = []
    package var lineNumbers: [Int] = []
  }

  /// About how many bytes of lines a piece holds.
  static let pieceBytes = 1 << 20
  /// How many parsed pieces may wait for the caller.
  static let piecesAhead = 2

  private struct Shared {
    var ready: [Result<Piece, MsglogError>] = []
    /// The parser handed out its last piece (or its error).
    var finished = false
    /// The caller wants no more.
    var stopped = false
  }

  private let input: ImportInput
  private let defaultStream: StreamName
  private let shared = Guarded(Shared())
  private var thread: pthread_t? = nil
  /// Read by the parsing thread only (or by `next`, when there is none).
  private let blocks: Blocks
  private var parser: ImportLine.Reader

  /// Starts parsing `input`: on a thread when it is large, else as `next` asks.
  package init(_ input: ImportInput, defaultStream: StreamName) {
    self.input = input
    self.defaultStream = defaultStream
    self.blocks = Blocks(input)
    self.parser = ImportLine.Reader(defaultStream: defaultStream)
    if case .memory(let bytes) = input, bytes.count < Self.pieceBytes { return }
    var thread = pthread_t()
    let this = Unmanaged.passRetained(self).toOpaque()
    let rc = pthread_create(
      &thread, nil,
      { raw in
        Unmanaged<ImportLineReader>.fromOpaque(raw!).takeRetainedValue().parseAhead()
        return nil
      }, this)
    if rc == 0 {
      self.thread = thread
    } else {
      Unmanaged<ImportLineReader>.fromOpaque(this).release()
    }
  }

  deinit { stop() }

  /// The next piece, nil after the last; a line that does not parse (or
  /// a file that cannot be read) throws, after the pieces before it.
  package func next() throws(MsglogError) -> Piece? {
    guard thread != nil else { return try parsePiece() }
    let taken = shared.wait(until: { !$0.ready.isEmpty || $0.finished }) { shared, _ in
      shared.ready.isEmpty ? nil : shared.ready.removeFirst()
    }
    return try taken?.get()
  }

  /// Stops the parsing thread and waits for it; the input may then go.
  package func stop() {
    guard let thread else { return }
    shared.update { $0.stopped = true }
    pthread_join(thread, nil)
    self.thread = nil
  }

  /// The parsing thread: pieces, each as soon as fewer than `piecesAhead` wait.
  private func parseAhead() {
    while true {
      let goOn = shared.wait(until: { $0.ready.count < Self.piecesAhead || $0.stopped }) { shared, _ in
        !shared.stopped
      }
      guard goOn else { return }
      let piece = Result { () throws(MsglogError) in try parsePiece() }
      let last: Bool
      switch piece {
      case .success(nil): last = true
      case .failure: last = true
      case .success: last = false
      }
      shared.update { shared in
        if case .success(let piece?) = piece { shared.ready.append(.success(piece)) }
        if case .failure(let error) = piece { shared.ready.append(.failure(error)) }
        shared.finished = last
      }
      if last { return }
    }
  }

  /// Parses the lines of the next block; nil at the end of the input.
  private func parsePiece() throws(MsglogError) -> Piece? {
    guard let (block, firstLine) = try blocks.next() else { return nil }
    var piece = Piece()
    var number = firstLine - 1
    var start = 0
    while start < block.count {
      let end = ImportLine.endOfLine(block, from: start)
      number += 1
      let line = UnsafeRawBufferPointer(rebasing: block[start..<end])
      start = end + 1
      if ImportLine.isBlank(line) { continue }
      do {
        piece.requests.append(try parser.parse(line))
        piece.lineNumbers.append(number)
      } catch {
        throw MsglogError.line(number, error)
      }
    }
    return piece
  }

  /// How many lines `input` holds (the last may lack its newline) — what
  /// an import's progress counts to, and the most events it can append —
  /// and whether they are all blank.
  package static func measure(_ input: ImportInput) throws(MsglogError) -> (lines: Int, blank: Bool) {
    let blocks = Blocks(input)
    var count = 0
    var blank = true
    while let (block, _) = try blocks.next() {
      count += ImportLine.lineCount(block)
      if blank { blank = block.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A } }
    }
    return (count, blank)
  }

  /// The input's bytes as blocks of whole lines, each with the number of
  /// its first line; a file's through a buffer of its own, which holds a
  /// block and the start of the line after it.
  final class Blocks {
    let input: ImportInput
    /// The number of the next block's first line.
    private var line = 1
    /// Memory input: where the next block starts.
    private var offset = 0
    /// File input: the buffer, the bytes in it, how many of those the last
    /// block handed out, and where in the file the next read starts.
    private var buffer: UnsafeMutableRawPointer? = nil
    private var capacity = 0
    private var filled = 0
    private var handed = 0
    private var readOffset = 0
    private var atEnd = false

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    init(_ input: ImportInput) {
      self.input = input
      switch input {
      case .memory(let bytes):
        if bytes.starts(with: Self.byteOrderMark) { offset = 3 }
      case .file(let fd, _):
        // Standard input redirected from a file starts where its offset is
        // (a script may have read a first line itself).
        readOffset = max(0, Int(lseek(fd, 0, SEEK_CUR)))
        startOffset = readOffset
      }
    }

    /// Where a file's lines start.
    private var startOffset = 0

    deinit { buffer?.deallocate() }

    /// The next block, valid until the next call; nil at the end.
    func next() throws(MsglogError) -> (UnsafeRawBufferPointer, Int)? {
      switch input {
      case .memory(let bytes):
        guard offset < bytes.count else { return nil }
        let start = offset
        var end = bytes.count
        let past = start + ImportLineReader.pieceBytes
        if past < bytes.count, let newline = memchr(bytes.baseAddress! + past, 0x0A, bytes.count - past) {
          end = UnsafeRawPointer(newline) - bytes.baseAddress! + 1
        }
        offset = end
        return handOut(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
      case .file(let fd, let shown):
        return try nextOfFile(fd, shown: shown)
      }
    }

    private func handOut(_ block: UnsafeRawBufferPointer) -> (UnsafeRawBufferPointer, Int) {
      let first = line
      line += ImportLine.lineCount(block)
      return (block, first)
    }

    /// Reads until the buffer holds a block's worth and a newline (or the
    /// file ends), and hands out its whole lines.
    private func nextOfFile(_ fd: Int32, shown: String) throws(MsglogError) -> (UnsafeRawBufferPointer, Int)? {
      let piece = ImportLineReader.pieceBytes
      if handed > 0 {
        // What is left after the last block is the start of a line (no newline).
        memmove(buffer!, buffer! + handed, filled - handed)
        filled -= handed
        handed = 0
      }
      var newlineIn = false
      while !atEnd, !(filled >= piece && newlineIn) {
        if capacity < filled + piece {
          let bigger = UnsafeMutableRawPointer.allocate(byteCount: max(2 * capacity, filled + piece), alignment: 16)
          if let buffer { bigger.copyMemory(from: buffer, byteCount: filled) }
          buffer?.deallocate()
          buffer = bigger
          capacity = max(2 * capacity, filled + piece)
        }
        var got: Int
        repeat { got = pread(fd, buffer! + filled, piece, off_t(readOffset)) } while got < 0 && errno == EINTR
        guard got >= 0 else { throw MsglogError.cannotReadInput("cannot read \(shown): \(systemMessage(errno))") }
        if got == 0 {
          atEnd = true
          break
        }
        if readOffset == startOffset, got >= 3, memcmp(buffer!, Self.byteOrderMark, 3) == 0 {
          memmove(buffer!, buffer! + 3, got - 3)
          readOffset += 3
          got -= 3
        }
        if memchr(buffer! + filled, 0x0A, got) != nil { newlineIn = true }
        filled += got
        readOffset += got
      }
      guard filled > 0 else { return nil }
      // Whole lines only, unless the file ends without a newline.
      var cut = filled
      if !atEnd {
        let bytes = UnsafeRawBufferPointer(start: buffer!, count: filled)
        if let last = bytes.lastIndex(of: 0x0A) { cut = last + 1 }
      }
      handed = cut
      return handOut(UnsafeRawBufferPointer(start: buffer!, count: cut))
    }
  }
}
