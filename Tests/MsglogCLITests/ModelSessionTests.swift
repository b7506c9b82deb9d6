import Foundation
import MsglogTestSupport
import Testing

/// A seeded random session of the independent model (Fixtures/model.py,
/// driven by Fixtures/differential.py) run through the real binary, one
/// process per command: the same exit class and `--json` answer for every
/// command (appends, inserts, moves, removes, edits, restores, undos and
/// redos, stale writes with and without `--rebase`, refused ones), the same
/// `list --json` after every step, the same `export` at the end. Times are
/// the binary's own, so they are masked; the library test
/// (ModelDifferentialTests) compares them too.
@Suite struct ModelSessionTests {
  struct Step: Decodable {
    var step: Int
    var args: [String]
    var outcome: String
    var output: String?
    var list: String
  }

  static func exitCode(_ outcome: String) -> Int32 {
    switch outcome {
    case "ok", "noop": return 0
    case "refused": return 1
    case "conflict": return 75
    default: return 64
    }
  }

  @Test(arguments: [(Store.lmdb, 11, 160), (.lmdb, 12, 160), (.postgres, 13, 80)])
  func theBinaryAgreesWithTheModel(_ store: Store, _ seed: Int, _ count: Int) throws {
    let script = python([fixture("differential.py"), String(seed), String(count)])
    #expect(script.code == 0, "\(script)")
    let lines = script.lines
    let steps = try lines.dropLast().map { try JSONDecoder().decode(Step.self, from: Data($0.utf8)) }
    let export = try JSONSerialization.jsonObject(with: Data(lines.last!.utf8)) as! [String: [String]]
    let s = Sandbox(store)
    for step in steps {
      let r = s.run(["--json"] + step.args)
      let context = "seed \(seed) step \(step.step): msglog \(step.args.joined(separator: " "))"
      #expect(r.code == Self.exitCode(step.outcome), "\(context): \(r)")
      switch step.outcome {
      case "ok": #expect(maskingTimes(r.stdout) == maskingTimes(step.output! + "\n"), "\(context): \(r)")
      case "noop":
        // With --json, serve's document for a write that changed nothing.
        let key = ["move": "moved", "edit": "edited", "undo": "undone"][step.args[0]] ?? "?"
        #expect(
          r.stdout == "{\"\(key)\":false}\n" && r.stderr.hasPrefix("msglog: nothing to do"), "\(context): \(r)")
      default: #expect(r.stdout.isEmpty && r.stderr.hasPrefix("msglog: "), "\(context): \(r)")
      }
      let stream = step.args[step.args.firstIndex(of: "--stream")! + 1]
      let list = s.run(["list", "--json", "--stream", stream])
      let listed = list.code == 0 ? list.stdout : #"{"stream":"\#(stream)","seq":0,"version":0,"count":0,"items":[]}"# + "\n"
      #expect(maskingTimes(listed) == maskingTimes(step.list + "\n"), "\(context)")
      if maskingTimes(listed) != maskingTimes(step.list + "\n") { return }
    }
    #expect(maskingTimes(s.export()) == maskingTimes(export["export"]!.map { $0 + "\n" }.joined()))
    #expect(s.run("verify").code == 0)
  }
}
