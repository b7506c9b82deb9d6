import Foundation
import MsglogTestSupport
import Testing

@testable import Msglog
@testable import MsglogCore

/// A large import's lines are read in two halves at once: the same
/// requests and line numbers as one pass, and a refused line named by its
/// number in the whole input, whichever half it is in.
@Suite struct ImportLineHalvesTests {
  /// Lines of every kind, blank ones among them, past the size that splits.
  static func lines(count: Int) -> [String] {
    (0..<count).map { i in
      switch i % 7 {
      case 3: return ""
      case 5: return #"{"op":"move","from":0,"to":1,"stream":"s\#(i % 3)"}"#
      case 6: return #"{"op":"remove","id":"00000000-0000-4000-8000-\#(String(format: "%012x", i - 1))"}"#
      default:
        return
          #"{"op":"insert","index":0,"text":"line \#(i) \"é\"\n","id":"00000000-0000-4000-8000-\#(String(format: "%012x", i))","time":"2021-04-19T06:06:58.000Z","stream":"s\#(i % 3)"}"#
      }
    }
  }

  static func read(_ text: String, halves: Bool) -> Result<([WriteRequest], [Int]), MsglogError> {
    Array(text.utf8).withUnsafeBytes { raw in
      Result { () throws(MsglogError) in
        halves
          ? try EventLog.readImportLines(raw, defaultStream: "main")
          : try EventLog.readImportLines(part: raw, defaultStream: "main")
      }
    }
  }

  @Test func twoHalvesReadAsOnePass() throws {
    let text = Self.lines(count: 20_000).joined(separator: "\n")
    #expect(text.utf8.count > ImportLineHalves.minimumBytes)
    let (requests, numbers) = try Self.read(text, halves: true).get()
    let (expected, expectedNumbers) = try Self.read(text, halves: false).get()
    #expect(requests.count == expected.count)
    #expect(requests == expected)
    #expect(numbers == expectedNumbers)
    #expect(numbers.last == 20_000)
  }

  @Test func aRefusedLineIsNamedInTheWholeInput() throws {
    for bad in [150, 10_000, 19_990] {
      var lines = Self.lines(count: 20_000)
      lines[bad - 1] = #"{"op":"insert","text":1}"#
      let text = lines.joined(separator: "\n")
      guard case .failure(let error) = Self.read(text, halves: true),
        case .failure(let expected) = Self.read(text, halves: false)
      else {
        Issue.record("line \(bad) was not refused")
        continue
      }
      #expect(error == expected)
      guard case .line(let n, _) = error else {
        Issue.record("\(error)")
        continue
      }
      #expect(n == bad)
    }
    // Two bad lines, one in each half: the first one is named.
    var lines = Self.lines(count: 20_000)
    lines[9_000] = "{"
    lines[18_000] = "}"
    guard case .failure(.line(let n, _)) = Self.read(lines.joined(separator: "\n"), halves: true) else {
      Issue.record("not refused")
      return
    }
    #expect(n == 9_001)
  }
}
