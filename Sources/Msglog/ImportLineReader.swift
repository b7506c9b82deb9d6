import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// An import's lines parsed into requests a piece at a time — about a
/// mebibyte of lines each, the first ones smaller — on a thread of its
/// own, starting a piece while fewer than two mebibytes of parsed lines
/// wait for the caller, who performs each piece while the next is parsed:
/// the import holds a few pieces' requests, never the whole input's (a 52
/// MB file's requests took 300 MB), and parsing, a third of an import into
/// an empty database, overlaps the build (and, for a file, the measuring
/// pass and the database's making before it: `EventLog.importLines`).
///
/// Lines are numbered from 1 in the whole input, blank lines skipped (and
/// counted). A line that does not parse ends the pieces: the lines before
/// it are handed out first, as a piece of their own, and `next` throws
/// `MsglogError.line` after them, so that the first line that fails, for
/// whatever reason, is the one named.
///
/// The reader stops its thread when it goes (or at `stop`), before the
/// input's bytes may go.
package final class ImportLineReader: @unchecked Sendable {
  /// The requests of consecutive lines, with the number of the line each came from.
  package struct Piece {
    package var requests: [WriteRequest] = []
    package var lineNumbers: [Int] = []
    /// The bytes of the lines it came from.
    var bytes = 0
  }

  /// About how many bytes of lines a piece holds.
  static let pieceBytes = 1 << 20
  /// How many bytes of lines parsed pieces may hold while they wait for
  /// the caller: two pieces' worth. (Counted in pieces, the first, smaller
  /// pieces stopped the parser while the caller was still making the
  /// database, and it then waited for the larger ones.)
  static let bytesAhead = 2 * pieceBytes
  /// Fewer bytes than any line that makes a request (with its newline):
  /// the shortest, `{"op":"undo"}`, is 13.
  static let shortestRequestLine = 8

  private let parsing: Parsing
  /// How the pieces come: parsed as `next` asks (a small input), from a
  /// parsing thread (which runs, or ran and was not yet waited for), or no
  /// more — once stopped, a reader never goes on from where its thread
  /// was (a write run again with a used-up reader imported nothing).
  private enum Mode { case asked, threaded, stopped }
  private var mode = Mode.asked
  /// Without a thread: the error that ends the pieces, after the one handed out.
  private var pendingError: MsglogError? = nil

  /// Starts parsing `input`: on a thread when it is large, else as `next` asks.
  package init(_ input: ImportInput, defaultStream: StreamName) {
    parsing = Parsing(input, defaultStream: defaultStream)
    if case .memory(let bytes) = input, bytes.count < Self.pieceBytes { return }
    // The thread holds the parsing state only, never the reader, so that
    // the reader's deinit runs on its owner's thread and waits for it.
    if startThread({ [parsing] in parsing.parseAhead() }) { mode = .threaded }
  }

  deinit { stop() }

  /// The next piece, nil after the last; a line that does not parse (or
  /// a file that cannot be read) throws, after the pieces before it.
  package func next() throws(MsglogError) -> Piece? {
    precondition(mode != .stopped, "an import's lines were asked of a reader already stopped")
    guard mode == .threaded else {
      if let pendingError { throw pendingError }
      let (piece, error) = parsing.parsePiece()
      pendingError = error
      if let piece, !piece.requests.isEmpty || error == nil { return piece }
      if let error { throw error }
      return nil
    }
    let taken = parsing.shared.wait(until: { !$0.ready.isEmpty || $0.finished }) { shared, _ in
      shared.ready.isEmpty ? nil : shared.ready.removeFirst()
    }
    return try taken?.get()
  }

  /// Stops the parsing thread and waits until it is done with the input,
  /// which may then go.
  package func stop() {
    defer { mode = .stopped }
    guard mode == .threaded else { return }
    parsing.shared.update { $0.stopped = true }
    parsing.shared.wait(until: \.exited, wakingOthers: false) { _, _ in }
  }

  /// What the parsing thread works on, and hands over through `shared`.
  final class Parsing: @unchecked Sendable {
    struct Shared {
      var ready: [Result<Piece, MsglogError>] = []
      /// The bytes of the lines of the pieces in `ready` (a few at most).
      var readyBytes: Int {
        ready.reduce(0) { bytes, piece in
          guard case .success(let piece) = piece else { return bytes }
          return bytes + piece.bytes
        }
      }
      /// The parser handed out its last piece (or its error).
      var finished = false
      /// The reader wants no more.
      var stopped = false
      /// The parsing thread is past its last use of the input.
      var exited = false
    }

    let shared = Guarded(Shared())
    /// Used by one thread at a time: the parsing thread, or the reader's when there is none.
    private let blocks: Blocks
    private var parser: ImportLine.Reader

    init(_ input: ImportInput, defaultStream: StreamName) {
      blocks = Blocks(input)
      parser = ImportLine.Reader(defaultStream: defaultStream)
    }

    /// The parsing thread: pieces, each as soon as the waiting ones hold
    /// fewer than `bytesAhead` bytes of lines.
    func parseAhead() {
      defer { shared.update { $0.exited = true } }
      while true {
        let goOn = shared.wait(until: { $0.readyBytes < ImportLineReader.bytesAhead || $0.stopped }) { shared, _ in
          !shared.stopped
        }
        guard goOn else { return }
        let (piece, error) = parsePiece()
        shared.update { shared in
          if let piece, !piece.requests.isEmpty || error == nil { shared.ready.append(.success(piece)) }
          if let error { shared.ready.append(.failure(error)) }
          shared.finished = piece == nil || error != nil
        }
        if piece == nil || error != nil { return }
      }
    }

    /// Parses the lines of the next block: its piece (nil at the end of the
    /// input) and, when a line does not parse, the requests of the lines
    /// before it with the error that ends the pieces.
    func parsePiece() -> (Piece?, MsglogError?) {
      let next: (UnsafeRawBufferPointer, Int)?
      do {
        next = try blocks.next()
      } catch {
        return (nil, error)
      }
      guard let (block, firstLine) = next else { return (nil, nil) }
      var piece = Piece(bytes: block.count)
      // Made as large as they get at once: grown an append at a time, the
      // requests' array (a mebibyte a piece) was copied into fresh pages
      // again and again, a third of a short import's page faults. Blank
      // lines count but make no request: no more than the shortest
      // request's line could fill (a block of newlines asked for 200 MB).
      let most = min(blocks.lastLineCount, block.count / ImportLineReader.shortestRequestLine + 1)
      piece.requests.reserveCapacity(most)
      piece.lineNumbers.reserveCapacity(most)
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
          return (piece, MsglogError.line(number, error))
        }
      }
      return (piece, nil)
    }
  }
}
