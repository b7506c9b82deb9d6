import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A trimmed log's export begins with its bases (`ImportedBase`): read
/// before the lines after them, which an import performs as any others.
extension ImportInput {
  /// The base lines the input begins with, and the input after them (a
  /// file's offset moved past them). No base lines: none, and the input
  /// as it was.
  func takingBases() throws(MsglogError) -> (bases: [ImportedBase], rest: ImportInput) {
    var bases: [ImportedBase] = []
    switch self {
    case .memory(let bytes):
      var start = 0
      while start < bytes.count {
        let end = ImportLine.endOfLine(bytes, from: start)
        let line = UnsafeRawBufferPointer(rebasing: bytes[start..<end])
        guard ImportInput.isBase(line) else { break }
        bases.append(try ImportInput.base(Array(line), number: bases.count + 1))
        start = min(end + 1, bytes.count)
      }
      return (bases, bases.isEmpty ? self : .memory(UnsafeRawBufferPointer(rebasing: bytes[start...])))
    case .file(let fd, let shown, let end):
      let begin = Int(lseek(fd, 0, SEEK_CUR))
      var offset = max(begin, 0)
      while let line = try ImportInput.line(of: fd, at: offset, shown: shown) {
        let isBase = line.withUnsafeBytes { ImportInput.isBase($0) }
        guard isBase else { break }
        bases.append(try ImportInput.base(line, number: bases.count + 1))
        offset += line.count + 1
      }
      if !bases.isEmpty { lseek(fd, off_t(offset), SEEK_SET) }
      return (bases, .file(descriptor: fd, shown: shown, end: end))
    }
  }

  private static func isBase(_ line: UnsafeRawBufferPointer) -> Bool {
    !line.isEmpty && ImportedBase.isBaseLine(line)
  }

  private static func base(_ line: [UInt8], number: Int) throws(MsglogError) -> ImportedBase {
    do { return try ImportedBase(parsing: line) } catch { throw .line(number, error) }
  }

  /// The line of the file at `offset`, without its newline; nil at the end.
  private static func line(of fd: Int32, at offset: Int, shown: String) throws(MsglogError) -> [UInt8]? {
    var line: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var at = offset
    while true {
      let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(at)) }
      if n < 0 { throw .cannotReadInput("cannot read \(shown): \(systemMessage(errno))") }
      if n == 0 { return line.isEmpty && at == offset ? nil : line }
      if let newline = chunk[..<n].firstIndex(of: UInt8(ascii: "\n")) {
        line += chunk[..<newline]
        return line
      }
      line += chunk[..<n]
      at += n
    }
  }
}
