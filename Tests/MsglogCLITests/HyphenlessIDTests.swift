import Foundation
import MsglogTestSupport
import Testing

/// A full UUID written as 32 hex digits without dashes (as some systems
/// print one) is that UUID wherever msglog reads an id — `--id`, the ID of
/// `remove`, `edit`, `restore`, an import line's `id` — in any case, and
/// printed in canonical form.
@Suite struct HyphenlessIDTests {
  static let id = "12345678-aaaa-4aaa-8aaa-000000000002"
  static let bare = "12345678aaaa4aaa8aaa000000000002"

  @Test func theCommandLineTakesItAsTheUUID() {
    let s = Sandbox()
    var r = s.run(["append", "--id", Self.bare, "first"])
    #expect(r.code == 0 && r.stdout == Self.id + "\n", "\(r)")
    s.append("second")
    r = s.run(["edit", Self.bare.uppercased(), "first, edited"])
    #expect(r.code == 0, "\(r)")
    r = s.run(["remove", Self.bare])
    #expect(r.code == 0 && r.stdout == "removed \(Self.id)\n", "\(r)")
    r = s.run(["restore", Self.bare])
    #expect(r.code == 0, "\(r)")
    #expect(s.run(["list"]).stdout.contains("12345678  -  first, edited"))
    // A used id is refused as the UUID it is, not as a prefix.
    r = s.run(["append", "--id", Self.bare, "again"])
    #expect(r.code == 1 && r.stderr.hasPrefix("msglog: id \(Self.id) was already used"), "\(r)")
  }

  @Test func importLinesTakeIt() {
    let s = Sandbox()
    let lines = [
      #"{"op":"append","id":"\#(Self.bare)","text":"imported"}"#,
      #"{"op":"append","text":"other"}"#,
      #"{"op":"edit","id":"\#(Self.bare.uppercased())","text":"edited"}"#,
      #"{"op":"remove","id":"\#(Self.bare)"}"#,
    ]
    let r = s.run(["import"], stdin: Data(lines.joined(separator: "\n").utf8))
    #expect(r.code == 0, "\(r)")
    let export = s.export()
    #expect(export.contains(#""id":"\#(Self.id)""#) && !export.contains(Self.bare), "\(export)")
    #expect(s.run(["list"]).lines.count == 1)
  }

  @Test(arguments: ["12345678aaaa4aaa8aaa00000000002", "12345678aaaa4aaa8aaa0000000000021", "12345678aaaa4aaa8aaa00000000000g"])
  func nearlyThirtyTwoDigitsIsNoUUID(_ text: String) {
    let s = Sandbox()
    s.append("x")
    let r = s.run(["append", "--id", text, "y"])
    #expect(r.code == 64 && r.stderr.hasPrefix("msglog: malformed id '\(text)'"), "\(r)")
  }
}
