import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// GUIDE.md's "Use it from Swift" runs here verbatim: the block between the
/// markers below must be the GUIDE.md's, character for character.
@Suite struct ReadmeSwiftTests {
  /// The GUIDE.md's example, in a temporary directory.
  static func example() async throws -> [String] {
    var printed: [String] = []
    func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
    // README: begin
    let log = try EventLog("chat.lmdb")  // nothing is made until the first write
    let board = log.stream("board")  // one stream, named once
    var shown = try board.items()  // the list as shown (a first launch: no items, at version 0)
    let start = shown.version
    let hello = try board.append("Morning! Review at 11?", sender: "ann")
    try board.append("Yes, room 4B.", sender: "bob")
    try board.move(from: 1, to: 0)  // a drag: bob's reply goes first
    for item in try board.items().items {
      print(item.sender ?? "-", item.text)
    }
    do {
      try board.move(from: 0, to: 1, expectVersion: 2)  // the list we showed was at version 2
    } catch MsglogError.versionConflict(_, let expected, let actual) {
      print("someone else changed it: version \(actual), not \(expected)")
    }
    try board.remove(id: hello.event.id)
    try board.undo()  // ann's message is back, where it was

    // A live list: the list as shown, brought up to date as any process commits.
    for try await update in board.updates(from: shown) {
      update.apply(to: &shown)  // Int positions; in a replica, pending writes too
      if shown.version >= start + 5 { break }  // the five writes above
    }
    print(shown.items.map(\.text).joined(separator: " / "))
    // README: end
    return printed
  }

  @Test(.timeLimit(.minutes(1))) func theExampleRunsAndPrintsWhatTheReadmeSays() async throws {
    let dir = TemporaryDirectory()
    let previous = FileManager.default.currentDirectoryPath
    _ = FileManager.default.changeCurrentDirectoryPath(dir.path)
    defer { _ = FileManager.default.changeCurrentDirectoryPath(previous) }
    let printed = try await Self.example()
    #expect(printed.count == 4, "\(printed)")
    #expect(printed[0] == "bob Yes, room 4B.")
    #expect(printed[1] == "ann Morning! Review at 11?")
    #expect(printed[2] == "someone else changed it: version 3, not 2")
    // The live list, from a first launch's empty one, is what the log lists.
    #expect(printed[3] == "Yes, room 4B. / Morning! Review at 11?")
    // Run again on the same database it ends too (it waited for version 5
    // for ever, the list at 10 by then), the list showing both runs'.
    let again = try await Self.example()
    #expect(again.count == 6 && again[4] == "someone else changed it: version 8, not 2", "\(again)")
    #expect(again.last == "Morning! Review at 11? / Yes, room 4B. / Morning! Review at 11? / Yes, room 4B.", "\(again)")
  }

  @Test func theReadmeShowsThisVeryCode() throws {
    let source = try String(contentsOfFile: #filePath, encoding: .utf8)
    let begin = try #require(source.range(of: "// README: begin\n"))
    let end = try #require(source.range(of: "    // README: end"))
    let code = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
    let readme = try String(contentsOfFile: repositoryRoot + "/docs/GUIDE.md", encoding: .utf8)
    #expect(
      readme.contains("```swift\nimport Msglog\n\n" + code + "```\n"), "GUIDE.md's Swift example differs from the test's")
    // And the package lines name this package and its real product.
    #expect(readme.contains(#".package(name: "msglog", path: "../msglog")"#))
    #expect(readme.contains(#".product(name: "Msglog", package: "msglog")"#))
    let manifest = try String(contentsOfFile: repositoryRoot + "/Package.swift", encoding: .utf8)
    #expect(manifest.contains(#"name: "msglog""#) && manifest.contains(#".library(name: "Msglog""#))
  }
}
