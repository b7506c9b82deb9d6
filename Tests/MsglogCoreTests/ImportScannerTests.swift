import MsglogCoreTestSupport
import Testing

@testable import MsglogCore

/// The import line scanner against the general JSON parser: for every line
/// the scanner reads, both must give the same request or the same error.
@Suite struct ImportScannerTests {
  /// What a line became: its request, or the message that refused it.
  static func outcome(_ members: WriteMembers) -> String {
    var members = members
    do {
      return "\(try Write(decoding: &members, door: .importLine, defaultStream: "main").request)"
    } catch {
      return "error: \(error)"
    }
  }

  static func general(_ line: String) -> String {
    let bytes = Array(line.utf8)
    return bytes.withUnsafeBytes { raw in
      do {
        return outcome(try ImportLine.generalMembers(raw))
      } catch {
        return "error: \(error)"
      }
    }
  }

  static func scanned(_ line: String, lastStream: (bytes: [UInt8], name: StreamName)? = nil) -> String? {
    Array(line.utf8).withUnsafeBytes { raw in
      ImportLine.Scanner.members(raw, lastStream: lastStream).map(outcome)
    }
  }

  /// Values of every kind for every key, valid and not, in random lines.
  @Test func theScannerAgreesWithTheGeneralParser() {
    var random = SeededGenerator(seed: 0x1A9_0127)
    let keys = ["op", "stream", "id", "index", "text", "sender", "time", "from", "to", "seq", "version", "sendr", "Op"]
    let values = [
      #""append""#, #""insert""#, #""remove""#, #""move""#, #""jump""#, #""main""#, #""doc""#, #""""#,
      #""cd613e30-d8f1-4adf-91b7-584a2265b1f5""#, #""CD613E30-D8F1-4ADF-91B7-584A2265B1F5""#, #""cd613e30""#,
      #""cd613e30-d8f1-4adf-91b7-584a2265b1fz""#, #""2021-04-19T06:06:58.000Z""#, #""2021-02-30T06:06:58Z""#,
      #""2021-04-19T06:06:58+02:00""#, #""héllo wörld""#, #""tab\there""#, #""\u00e9""#, #""a\"b""#,
      "0", "7", "007", "12345678901234567890", "9223372036854775807", "9223372036854775808", "-1", "1.5", "1e3",
      "true", "null", "[1]", #"{"a":1}"#, #""\u0001""#,
    ]
    var compared = 0
    for _ in 0..<20_000 {
      let count = Int.random(in: 0...6, using: &random)
      var members: [String] = []
      for _ in 0..<count {
        let key = keys.randomElement(using: &random)!
        let value = values.randomElement(using: &random)!
        let space = [" ", "", "\t"].randomElement(using: &random)!
        members.append("\"\(key)\"\(space):\(space)\(value)")
      }
      let line = "{" + members.joined(separator: [",", ", "].randomElement(using: &random)!) + "}"
      if let scanned = Self.scanned(line) {
        #expect(scanned == Self.general(line), "\(line)")
        compared += 1
      }
    }
    // Most lines are plain enough for the scanner.
    #expect(compared > 5_000, "\(compared)")
  }

  @Test func exportLinesTakeTheScannerPath() {
    let lines = [
      #"{"seq":1,"stream":"doc","version":1,"time":"2021-04-19T06:06:58.000Z","op":"insert","id":"cd613e30-d8f1-4adf-91b7-584a2265b1f5","index":0,"text":"d"}"#,
      #"{"seq":2,"stream":"doc","version":2,"time":"2021-04-19T06:06:58.000Z","op":"remove","id":"cd613e30-d8f1-4adf-91b7-584a2265b1f5"}"#,
      #"{"seq":3,"stream":"doc","version":3,"time":"2021-04-19T06:06:58.000Z","op":"move","id":"cd613e30-d8f1-4adf-91b7-584a2265b1f5","from":0,"to":2}"#,
      #"{"op":"append","text":"hi","sender":"ann"}"#,
    ]
    for line in lines {
      let scanned = Self.scanned(line)
      #expect(scanned != nil && scanned == Self.general(line), "\(line)")
    }
    // A stream name equal to the previous line's is reused, and still the same.
    let doc: StreamName = "doc"
    #expect(Self.scanned(lines[0], lastStream: (Array("doc".utf8), doc)) == Self.general(lines[0]))
    // Simple escapes the scanner reads itself, as the general parser does.
    for line in [
      #"{"op":"append","text":"a\nb \"q\" \\ \/ \t\r\b\f","sender":"x\ty"}"#, #"{"op":"append","text":"\\"}"#,
    ] {
      let scanned = Self.scanned(line)
      #expect(scanned != nil && scanned == Self.general(line), "\(line)")
    }
    // What the scanner leaves to the general parser.
    for line in [
      #"{"op":"append","text":"\u00e9"}"#, #"{"op":"append","text":"a\qb"}"#, #"{"op":"append","text":"a\"#,
      #"{"op":"append","text":"x","op":"move"}"#, #"[1]"#, #"{"op":1.0}"#,
    ] {
      #expect(Self.scanned(line) == nil, "\(line)")
    }
  }
}
