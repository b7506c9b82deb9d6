import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

extension ImportLineReader {
  /// The input's bytes as blocks of whole lines, each with the number of
  /// its first line; a file's through a buffer of its own, which holds a
  /// block and the start of the line after it.
  final class Blocks {
    let input: ImportInput
    /// The number of the next block's first line.
    private var line = 1
    /// Memory input: where the next block starts.
    private var offset = 0
    /// File input: where its lines start and where it ends (nil: wherever
    /// reading finds its end); the buffer, the bytes in it, how many of
    /// those the last block handed out; where in the file the next read
    /// starts; whether the start was checked for a byte-order mark.
    private let start: Int
    private let limit: Int?
    private var buffer: UnsafeMutableRawPointer? = nil
    private var capacity = 0
    private var filled = 0
    private var handed = 0
    private var readOffset = 0
    private var atEnd = false
    private var checkedMark = false

    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
    /// About how many bytes of lines a block holds, once under way.
    let blockBytes: Int
    /// The next block's: the first are smaller (`firstBlockBytes`, doubling
    /// up to `blockBytes`), so that the import's builder, which waits for
    /// the first piece, starts early.
    private var nextBlockBytes: Int
    /// A short import's first piece of a mebibyte kept its builder waiting
    /// 3 ms of 30 for it.
    static let firstBlockBytes = 1 << 17

    /// `blockBytes`: a parsed piece's (the default), or less for a pass that
    /// only counts lines, whose buffer then stays in the cache and costs a
    /// few page faults instead of hundreds.
    init(_ input: ImportInput, blockBytes: Int = ImportLineReader.pieceBytes) {
      self.input = input
      self.blockBytes = blockBytes
      self.nextBlockBytes = min(blockBytes, Self.firstBlockBytes)
      switch input {
      case .memory(let bytes):
        if bytes.starts(with: Self.byteOrderMark) { offset = 3 }
        start = 0
        limit = nil
      case .file(let fd, _, let end):
        // Standard input redirected from a file starts where its offset is
        // (a script may have read a first line itself).
        start = max(0, Int(lseek(fd, 0, SEEK_CUR)))
        limit = end
      }
      readOffset = start
    }

    deinit { buffer?.deallocate() }

    /// Where a file's reading stopped: its end, once `next` returned nil.
    var end: Int { readOffset }

    /// The next block, valid until the next call; nil at the end.
    func next() throws(MsglogError) -> (UnsafeRawBufferPointer, Int)? {
      switch input {
      case .memory(let bytes):
        guard offset < bytes.count else { return nil }
        let first = offset
        var end = bytes.count
        let past = first + takeBlockBytes()
        if past < bytes.count, let newline = memchr(bytes.baseAddress! + past, 0x0A, bytes.count - past) {
          end = UnsafeRawPointer(newline) - bytes.baseAddress! + 1
        }
        offset = end
        return handOut(UnsafeRawBufferPointer(rebasing: bytes[first..<end]))
      case .file(let fd, let shown, _):
        return try nextOfFile(fd, shown: shown)
      }
    }

    /// How much the next block reads, the one after that growing.
    private func takeBlockBytes() -> Int {
      defer { nextBlockBytes = min(2 * nextBlockBytes, blockBytes) }
      return nextBlockBytes
    }

    private func handOut(_ block: UnsafeRawBufferPointer) -> (UnsafeRawBufferPointer, Int) {
      let first = line
      lastLineCount = ImportLine.lineCount(block)
      line += lastLineCount
      return (block, first)
    }

    /// How many lines the last block holds (blank ones too).
    private(set) var lastLineCount = 0

    /// Reads until the buffer holds a block's worth and a newline (or the
    /// file ends), and hands out its whole lines.
    private func nextOfFile(_ fd: Int32, shown: String) throws(MsglogError) -> (UnsafeRawBufferPointer, Int)? {
      let piece = takeBlockBytes()
      if handed > 0 {
        // What is left after the last block is the start of a line (no newline).
        memmove(buffer!, buffer! + handed, filled - handed)
        filled -= handed
        handed = 0
      }
      var newlineIn = false
      while !atEnd, !(filled >= piece && newlineIn) {
        if !newlineIn, filled > ImportInput.maximumLineBytes { throw ImportInput.lineTooLong(line) }
        if capacity < filled + piece {
          // Room for the largest block after the start of a line left over
          // from the last, from the first: a buffer grown after the first
          // block faulted in a second block's pages (512 faults a 1 MiB
          // piece). Pages never written are never faulted in.
          let bigger = max(2 * capacity, filled + piece, 2 * blockBytes)
          let grown = UnsafeMutableRawPointer.allocate(byteCount: bigger, alignment: 16)
          if let buffer { grown.copyMemory(from: buffer, byteCount: filled) }
          buffer?.deallocate()
          buffer = grown
          capacity = bigger
        }
        let want = limit.map { min(piece, $0 - readOffset) } ?? piece
        var got = 0
        if want > 0 {
          repeat { got = pread(fd, buffer! + filled, want, off_t(readOffset)) } while got < 0 && errno == EINTR
          guard got >= 0 else { throw .cannotReadInput("cannot read \(shown): \(systemMessage(errno))") }
        }
        if got == 0 {
          // Shorter than when it was measured: what was read may be half of what was meant.
          if let limit, readOffset < limit {
            throw .cannotReadInput("cannot read \(shown): it was cut short while it was read")
          }
          atEnd = true
          break
        }
        if memchr(buffer! + filled, 0x0A, got) != nil { newlineIn = true }
        filled += got
        readOffset += got
        if !checkedMark, filled >= 3 { skipByteOrderMark() }
      }
      if !checkedMark { skipByteOrderMark() }
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

    /// Drops a byte-order mark at the start of the file's lines, once.
    private func skipByteOrderMark() {
      checkedMark = true
      guard filled >= 3, memcmp(buffer!, Self.byteOrderMark, 3) == 0 else { return }
      memmove(buffer!, buffer! + 3, filled - 3)
      filled -= 3
    }
  }
}
