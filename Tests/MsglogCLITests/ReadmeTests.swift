import Foundation
import MsglogTestSupport
import Testing

/// The tours (the `console` blocks of README and docs/GUIDE.md, each on a
/// database of its own), run command by command on the real binary: every
/// line must be what the binary prints, up to ids and times (new on every run).
@Suite struct ReadmeTests {
  struct Step {
    var arguments: [String]
    var expected: String
  }

  /// The steps of the `console` block number `block` of `doc` (a path from
  /// the repository's root).
  static func steps(of doc: String, block: Int) throws -> [Step] {
    let readme = try String(contentsOfFile: fixture("../" + doc), encoding: .utf8)
    var from = readme.startIndex
    for _ in 0..<block { from = try #require(readme.range(of: "```console\n", range: from..<readme.endIndex)).upperBound }
    let start = try #require(readme.range(of: "```console\n", range: from..<readme.endIndex))
    let end = try #require(readme.range(of: "\n```", range: start.upperBound..<readme.endIndex))
    var steps: [Step] = []
    for line in readme[start.upperBound..<end.lowerBound].split(separator: "\n") {
      if line.hasPrefix("$ msglog ") {
        steps.append(Step(arguments: shellWords(String(line.dropFirst("$ msglog ".count))), expected: ""))
      } else {
        steps[steps.count - 1].expected += line + "\n"
      }
    }
    return steps
  }

  /// Splits words as a shell would, for the plain and double-quoted words the README uses.
  static func shellWords(_ line: String) -> [String] {
    var words: [String] = []
    var current = ""
    var quoted = false
    var inWord = false
    for c in line {
      if c == "\"" {
        quoted.toggle()
        inWord = true
      } else if c == " " && !quoted {
        if inWord { words.append(current) }
        current = ""
        inWord = false
      } else {
        current.append(c)
        inWord = true
      }
    }
    if inWord { words.append(current) }
    return words
  }

  /// README's short tour and GUIDE.md's working together.
  @Test(arguments: Store.allCases, ["README.md", "docs/GUIDE.md"])
  func theTourPrintsWhatTheReadmeShows(_ store: Store, _ doc: String) throws {
    let s = Sandbox(store)
    var ids: [(readme: String, actual: String)] = []
    func translate(_ text: String) -> String {
      var out = text
      for (readme, actual) in ids {
        out = out.replacingOccurrences(of: readme, with: actual)
        out = out.replacingOccurrences(of: String(readme.prefix(8)), with: String(actual.prefix(8)))
      }
      return out
    }
    let steps = try Self.steps(of: doc, block: 0)
    #expect(steps.count >= 10)
    for step in steps {
      let r = s.run(step.arguments.map(translate))
      #expect(r.code == 0, "\(step.arguments): \(r)")
      if step.arguments.first == "append" {
        ids.append((step.expected.trimmingCharacters(in: .newlines), r.stdout.trimmingCharacters(in: .newlines)))
      }
      #expect(maskingTimes(r.stdout) == maskingTimes(translate(step.expected)), "\(step.arguments)")
    }
  }

  /// README is a front page: what msglog is, the two commands, one short
  /// tour and where to read on; the rest is in docs/.
  @Test func theReadmeIsAFrontPage() throws {
    let readme = try String(contentsOfFile: fixture("../README.md"), encoding: .utf8)
    let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
    #expect(lines <= 200, "README has \(lines) lines")
  }

  /// docs/POSTGRES.md's example of a server that cannot be reached
  /// (port 1 refuses on any machine): the line it shows is stderr, exactly.
  @Test func theUnreachableServerExampleIsTrue() throws {
    let postgres = try String(contentsOfFile: fixture("../docs/POSTGRES.md"), encoding: .utf8)
    let lines = postgres.split(separator: "\n", omittingEmptySubsequences: false)
    let at = try #require(lines.firstIndex { $0.hasPrefix("    $ msglog --db postgres://") })
    let words = Self.shellWords(String(lines[at].dropFirst("    $ msglog ".count)))
    let r = Sandbox().run(words, useDefaultDB: false)
    #expect(r.code == 1 && r.stdout.isEmpty)
    #expect(r.stderr == lines[at + 1].dropFirst(4) + "\n", "\(r)")
  }
}
