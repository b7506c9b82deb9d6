import Foundation
import MsglogTestSupport
import Testing

@testable import Msglog
@testable import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// An import's lines are parsed a piece at a time, ahead of the import, from
/// bytes in memory or from a file: the same requests and line numbers as
/// parsing them one by one, and a refused line named by its number in the
/// whole input, after every piece before it.
@Suite struct ImportLineReaderTests {
  /// Lines of every kind, blank ones among them, over several pieces.
  static func lines(count: Int) -> [String] {
    (0..<count).map { i in
      switch i % 7 {
      case 3: return ""
      case 4: return "  \r"
      case 5: return #"{"op":"move","from":0,"to":1,"stream":"s\#(i % 3)"}"#
      case 6: return #"{"op":"remove","id":"00000000-0000-4000-8000-\#(String(format: "%012x", i - 1))"}"#
      default:
        return
          #"{"op":"insert","index":0,"text":"line \#(i) \"é\"\n","id":"00000000-0000-4000-8000-\#(String(format: "%012x", i))","time":"2021-04-19T06:06:58.000Z","stream":"s\#(i % 3)"}"#
      }
    }
  }

  /// What parsing `text` line by line gives: the requests and their line numbers.
  static func oneByOne(_ text: String) throws -> ([WriteRequest], [Int]) {
    var requests: [WriteRequest] = []
    var numbers: [Int] = []
    // Split as bytes: a Character would take "\r\n" as one.
    var lines = Array(text.utf8).split(separator: 0x0A, omittingEmptySubsequences: false)
    if text.hasSuffix("\n") { lines.removeLast() }
    for (i, line) in lines.enumerated() where !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) {
      do {
        requests.append(try ImportLine.parse(Array(line), defaultStream: "main"))
      } catch {
        throw MsglogError.line(i + 1, error)
      }
      numbers.append(i + 1)
    }
    return (requests, numbers)
  }

  /// The pieces a reader gives for `bytes`, from memory or from a file
  /// holding them, each with its size; the error it ends with, if any.
  static func read(_ bytes: [UInt8], fromFile: Bool) throws -> (pieces: [ImportLineReader.Piece], error: MsglogError?) {
    var pieces: [ImportLineReader.Piece] = []
    func drain(_ input: ImportInput) -> MsglogError? {
      let reader = ImportLineReader(input, defaultStream: "main")
      defer { reader.stop() }
      do {
        while let piece = try reader.next() { pieces.append(piece) }
        return nil
      } catch {
        return error
      }
    }
    guard fromFile else {
      let error = bytes.withUnsafeBytes { drain(.memory($0)) }
      return (pieces, error)
    }
    let dir = TemporaryDirectory()
    let path = dir.path + "/input.jsonl"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let fd = try ImportInput.open(path)
    defer { close(fd) }
    let error = drain(.file(descriptor: fd, shown: path))
    return (pieces, error)
  }

  @Test(arguments: [false, true]) func piecesReadAsOneByOne(fromFile: Bool) throws {
    let text = Self.lines(count: 50_000).joined(separator: "\n") + "\n"
    #expect(text.utf8.count > 3 * ImportLineReader.pieceBytes)
    let (pieces, error) = try Self.read(Array(text.utf8), fromFile: fromFile)
    #expect(error == nil)
    #expect(pieces.count >= 3, "\(pieces.count) pieces")
    let (expected, expectedNumbers) = try Self.oneByOne(text)
    let requests = pieces.flatMap(\.requests)
    #expect(requests.count == expected.count)
    #expect(requests == expected, "the requests differ")
    #expect(pieces.flatMap(\.lineNumbers) == expectedNumbers, "the line numbers differ")
    #expect(expectedNumbers.last == 50_000)
    let measure = try Array(text.utf8).withUnsafeBytes { try ImportInput.memory($0).measure() }
    #expect(measure.lines == 50_000 && !measure.blank && !measure.needsLedger)
  }

  @Test(arguments: [false, true]) func aRefusedLineIsNamedInTheWholeInputAfterThePiecesBefore(fromFile: Bool) throws {
    for bad in [150, 10_000, 19_990] {
      var lines = Self.lines(count: 20_000)
      lines[bad - 1] = #"{"op":"insert","text":1}"#
      let (pieces, error) = try Self.read(Array(lines.joined(separator: "\n").utf8), fromFile: fromFile)
      guard case .line(let n, _)? = error else {
        Issue.record("line \(bad) was not refused: \(String(describing: error))")
        continue
      }
      #expect(n == bad)
      // Every line before the bad one's piece was handed out, none after it.
      let handed = pieces.flatMap(\.lineNumbers)
      #expect(handed.allSatisfy { $0 < bad })
      // …and the bad line's piece starts no more than a piece's bytes before it.
      let before = lines[(handed.last ?? 0)..<(bad - 1)].reduce(0) { $0 + $1.utf8.count + 1 }
      #expect(
        before <= ImportLineReader.pieceBytes + 1_000, "the pieces before line \(bad) stop at \(handed.last ?? 0)")
    }
    // Two bad lines far apart: the first one is named.
    var lines = Self.lines(count: 20_000)
    lines[9_000] = "{"
    lines[18_000] = "}"
    let (_, error) = try Self.read(Array(lines.joined(separator: "\n").utf8), fromFile: fromFile)
    guard case .line(let n, _)? = error else {
      Issue.record("not refused")
      return
    }
    #expect(n == 9_001)
  }

  /// A byte-order mark, a last line without its newline, a line longer
  /// than a piece, and an input of blank lines only.
  @Test(arguments: [false, true]) func edgesOfTheInput(fromFile: Bool) throws {
    let long = String(repeating: "é", count: ImportLineReader.pieceBytes)  // two bytes each
    let text =
      "\u{FEFF}" + #"{"op":"append","text":"first"}"# + "\n\n" + #"{"op":"append","text":"\#(long)"}"#
      + "\n" + #"{"op":"append","text":"last"}"#
    let (pieces, error) = try Self.read(Array(text.utf8), fromFile: fromFile)
    #expect(error == nil)
    let requests = pieces.flatMap(\.requests)
    let texts = requests.map { request -> String in
      guard case .insert(let insert) = request.command else { return "?" }
      return insert.text
    }
    #expect(texts.map(\.count) == [5, long.count, 4])
    #expect(texts == ["first", long, "last"], "the texts differ")
    #expect(pieces.flatMap(\.lineNumbers) == [1, 3, 4])

    let blank = try Self.read(Array(" \n\r\n\t\n".utf8), fromFile: fromFile)
    #expect(blank.error == nil && blank.pieces.flatMap(\.requests).isEmpty)
    let measured = try Array(" \n\r\n\t\n".utf8).withUnsafeBytes { try ImportInput.memory($0).measure() }
    #expect(measured.lines == 3 && measured.blank)
  }

  /// A line that does not parse, after lines that do in the same piece:
  /// those lines are handed out first (the ledger may refuse one of them,
  /// which then is the first line that fails).
  @Test(arguments: [false, true]) func theLinesBeforeABadOneInItsPieceAreHandedOutFirst(fromFile: Bool) throws {
    let text = #"{"op":"remove","id":"abcdef12"}"# + "\n" + #"{"op":"append","text":"x"}"# + "\n" + #"{"op":"append","#
    let (pieces, error) = try Self.read(Array(text.utf8), fromFile: fromFile)
    #expect(pieces.flatMap(\.lineNumbers) == [1, 2])
    guard case .line(3, _)? = error else {
      Issue.record("line 3 was not refused: \(String(describing: error))")
      return
    }
  }

  /// Every pass over a file reads what the first found: lines added to it
  /// meanwhile are not read (a log still being written to is imported as
  /// it was when the import began).
  @Test func aFileIsReadToWhereItEndedWhenMeasured() throws {
    let dir = TemporaryDirectory()
    let path = dir.path + "/growing.jsonl"
    let first = (0..<20_000).map { #"{"op":"append","text":"line \#($0) of a file that grows"}"# + "\n" }.joined()
    try first.write(toFile: path, atomically: false, encoding: .utf8)
    let fd = try ImportInput.open(path)
    defer { close(fd) }
    let measure = try ImportInput.file(descriptor: fd, shown: path).measure()
    #expect(measure.lines == 20_000)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    try handle.seekToEnd()
    try handle.write(contentsOf: Data(#"{"op":"append","text":"late"}\#n"#.utf8))
    try handle.close()
    let reader = ImportLineReader(measure.input, defaultStream: "main")
    defer { reader.stop() }
    var numbers: [Int] = []
    while let piece = try reader.next() { numbers += piece.lineNumbers }
    #expect(numbers.count == 20_000 && numbers.last == 20_000)
  }

  /// The lines only the ledger performs are told from their keys' bytes,
  /// never from a string's content (where quotes are escaped).
  @Test func linesOnlyTheLedgerPerformsAreFoundBeforeTheImport() throws {
    func needsLedger(_ line: String) throws -> Bool {
      try Array(line.utf8).withUnsafeBytes { try ImportInput.memory($0).measure().needsLedger }
    }
    for line in [
      #"{"op":"edit","id":"x","text":"y"}"#, #"{"op" : "restore","id":"x"}"#, #"{ "op":"undo" }"#,
      #"{"op":"remove","id":"x","undoes":3}"#, #"{"op":"append","text":"x","origin":{"replica":"r"}}"#,
      #"{"text":"a","op":"edit"}"#,
    ] {
      #expect(try needsLedger(line), "\(line)")
    }
    for line in [
      #"{"op":"append","text":"{\"op\":\"edit\"}"}"#, #"{"op":"append","text":"undoes"}"#,
      #"{"op":"append","sender":"undo","text":"op"}"#, #"{"op":"move","from":0,"to":1}"#,
      #"{"op":"insert","index":0,"text":"\"undoes\": 1"}"#,
    ] {
      #expect(try !needsLedger(line), "\(line)")
    }
  }

  /// The vector scan finds what a byte-by-byte reading of the rule finds,
  /// wherever the words fall against its sixteen-byte steps: random
  /// lines of the words, their near misses, quotes, `o`, `u` and spaces.
  @Test func theScanForLedgerWordsMissesNoneAtAnyAlignment() throws {
    let pieces = [
      "\"", "o", "u", "x", " ", "\t", ":", "\"op\"", "\"edit\"", "\"undo\"", "\"undoes\"", "\"origin\"", "\"restore\"",
      "\"edi", "\"ori", "\"undoe", "é", "{", "}",
    ]
    /// The rule read byte by byte: a quote at `at` starting a key
    /// `"undoes"` or `"origin"`, or a key `"op"` whose value is one of three.
    func byRule(_ bytes: [UInt8]) -> Bool {
      func starts(_ word: String, _ at: Int) -> Bool {
        Array(bytes.dropFirst(at).prefix(word.utf8.count)) == Array(word.utf8)
      }
      func value(after offset: Int) -> Int? {
        var at = offset
        while at < bytes.count, [0x20, 0x09, 0x0D].contains(bytes[at]) { at += 1 }
        guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { return nil }
        at += 1
        while at < bytes.count, [0x20, 0x09, 0x0D].contains(bytes[at]) { at += 1 }
        return at
      }
      for at in bytes.indices {
        if (starts("\"undoes\"", at) || starts("\"origin\"", at)), value(after: at + 8) != nil { return true }
        if starts("\"op\"", at), let v = value(after: at + 4),
          starts("\"edit\"", v) || starts("\"restore\"", v) || starts("\"undo\"", v)
        {
          return true
        }
      }
      return false
    }
    var random = SeededGenerator(seed: 0x0905)
    var found = 0
    for _ in 0..<20_000 {
      let line = (0..<Int.random(in: 0...24, using: &random)).map { _ in pieces.randomElement(using: &random)! }
        .joined()
      let bytes = Array(line.utf8)
      let measured = try bytes.withUnsafeBytes { try ImportInput.memory($0).measure().needsLedger }
      #expect(measured == byRule(bytes), "\(line)")
      if measured { found += 1 }
    }
    // Both outcomes were tried many times.
    #expect(found > 500 && found < 19_500, "\(found)")
  }

  /// A reader stopped after its first piece, while its thread is parsing
  /// ahead, ends at once: nothing waits for a caller that left.
  @Test func stoppingEarlyEndsTheParser() throws {
    let bytes = Array((Self.lines(count: 40_000).joined(separator: "\n")).utf8)
    try bytes.withUnsafeBytes { raw in
      let reader = ImportLineReader(.memory(raw), defaultStream: "main")
      let first = try reader.next()
      #expect(first?.lineNumbers.first == 1)
      reader.stop()
    }
  }
}
