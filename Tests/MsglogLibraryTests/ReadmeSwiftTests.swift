import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// README's "Use it from Swift" runs here verbatim: the block between the
/// markers below must be the README's, character for character.
@Suite struct ReadmeSwiftTests {
  /// The README's example, in a temporary directory.
  static func example() async throws -> [String] {
    var printed: [String] = []
    func print(_ items: Any...) { printed.append(items.map { "\($0)" }.joined(separator: " ")) }
    // README: begin
    let log = try EventLog("chat.lmdb")
    let hello = try log.append("Morning! Review at 11?", sender: "ann")
    try log.append("Yes, room 4B.", sender: "bob")
    try log.move(from: 1, to: 0)  // a drag: bob's reply goes first
    for item in try log.items().items {
      print(item.sender ?? "-", item.text)
    }
    do {
      try log.move(from: 0, to: 1, expectVersion: 2)  // the list we showed was at version 2
    } catch MsglogError.versionConflict(_, let expected, let actual) {
      print("someone else changed it: version \(actual), not \(expected)")
    }
    try log.remove(id: hello.event.id)

    // Every event any process commits, in seq order, as it commits.
    for try await event in log.follow(from: 1) {
      print(event.seq, event.opName, event.id.short)
      if event.seq == 4 { break }
    }
    // README: end
    return printed
  }

  @Test func theExampleRunsAndPrintsWhatTheReadmeSays() async throws {
    let dir = TemporaryDirectory()
    let previous = FileManager.default.currentDirectoryPath
    FileManager.default.changeCurrentDirectoryPath(dir.path)
    defer { FileManager.default.changeCurrentDirectoryPath(previous) }
    let printed = try await Self.example()
    #expect(printed.count == 7, "\(printed)")
    #expect(printed[0] == "bob Yes, room 4B.")
    #expect(printed[1] == "ann Morning! Review at 11?")
    #expect(printed[2] == "someone else changed it: version 3, not 2")
    #expect(printed[3].hasPrefix("1 insert "))
    #expect(printed[6].hasPrefix("4 remove "))
  }

  @Test func theReadmeShowsThisVeryCode() throws {
    let source = try String(contentsOfFile: #filePath, encoding: .utf8)
    let begin = try #require(source.range(of: "// README: begin\n"))
    let end = try #require(source.range(of: "    // README: end"))
    let code = source[begin.upperBound..<end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false)
      .map { $0.hasPrefix("    ") ? String($0.dropFirst(4)) : String($0) }.joined(separator: "\n")
    let readme = try String(contentsOfFile: repositoryRoot + "/README.md", encoding: .utf8)
    #expect(
      readme.contains("```swift\nimport Msglog\n\n" + code + "```\n"), "README's Swift example differs from the test's")
    // And the package line names this package's real product.
    #expect(readme.contains(#".product(name: "Msglog", package: "msglog")"#))
    let manifest = try String(contentsOfFile: repositoryRoot + "/Package.swift", encoding: .utf8)
    #expect(manifest.contains(#"name: "msglog""#) && manifest.contains(#".library(name: "Msglog""#))
  }
}
