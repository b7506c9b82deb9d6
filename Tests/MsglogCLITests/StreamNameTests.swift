import Foundation
import MsglogTestSupport
import Testing

/// Stream names are byte strings: names that Swift's `String` calls equal
/// (canonical equivalence) or that merely look alike are different streams,
/// through every command, `verify`, and `export | import`.
@Suite struct StreamNameTests {
  /// Groups of names that look alike; within a group each is a distinct stream.
  static let lookAlikes: [[String]] = [
    ["\u{E9}", "e\u{301}", "E\u{301}", "\u{C9}"],  // NFC / NFD, and case
    ["\u{C5}", "A\u{30A}", "\u{212B}", "\u{E5}"],  // Å: precomposed, decomposed, ANGSTROM SIGN, lowercase
    ["K", "\u{212A}", "k", "\u{FF2B}"],  // KELVIN SIGN decomposes to K; fullwidth K
    ["A", "\u{FF21}", "a", "\u{FF41}"],  // width variants and case
    ["\u{1E9B}\u{323}", "\u{17F}\u{323}\u{307}", "\u{1E69}"],  // long s with dots, NFC/NFD/compatibility
  ]

  @Test(arguments: [1, 2, 3]) func lookAlikeNamesStayApart(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    // The NFC/NFD group whole, and three names of another group; some with a shared suffix.
    let suffix = Bool.random(using: &rng) ? "-chat" : ""
    var names = Self.lookAlikes[0].map { $0 + suffix }
    let other = Self.lookAlikes.dropFirst().randomElement(using: &rng)!
    names += other.shuffled(using: &rng).prefix(3).map { Bool.random(using: &rng) ? $0 + "-chat" : $0 }
    names = Array(Set(names.map { Array($0.utf8) })).map { String(decoding: $0, as: UTF8.self) }
      .shuffled(using: &rng)
    let s = Sandbox()
    var model: [[UInt8]: [String]] = [:]  // stream bytes -> texts in order
    for round in 0..<3 {
      for (n, name) in names.enumerated() {
        let text = "r\(round) n\(n)"
        let r = s.run(["append", "--stream", name, text])
        #expect(r.code == 0, "\(r)")
        model[Array(name.utf8), default: []].append(text)
      }
    }
    // One import file naming every stream: each line lands in its own stream.
    let importLines = names.enumerated().map { n, name in
      #"{"op":"append","stream":"\#(name)","text":"imported n\#(n)"}"#
    }
    #expect(s.run(["import"], stdin: Data(importLines.joined(separator: "\n").utf8)).code == 0)
    for (n, name) in names.enumerated() { model[Array(name.utf8)]!.append("imported n\(n)") }
    // Moves and removes per stream.
    for name in names {
      #expect(s.run(["move", "--stream", name, "0", "3"]).code == 0)
      model[Array(name.utf8)]!.insert(model[Array(name.utf8)]!.remove(at: 0), at: 3)
      let first = s.run(["list", "--json", "--stream", name])
      let id = try #require(items(first.stdout).first?["id"] as? String)
      #expect(s.run(["remove", "--stream", name, id]).code == 0)
      model[Array(name.utf8)]!.removeFirst()
    }

    func check(_ s: Sandbox) throws {
      for name in names {
        let listed = try items(s.run(["list", "--json", "--stream", name]).stdout).map { $0["text"] as! String }
        #expect(listed == model[Array(name.utf8)], "list of \(Array(name.utf8))")
        let replayed = try items(s.run(["replay", "--json", "--stream", name]).stdout).map { $0["text"] as! String }
        #expect(replayed == listed)
        let log = s.run(["log", "--json", "--stream", name]).lines
        #expect(log.count == 6, "log of \(Array(name.utf8)): \(log.count) events")
      }
      let streams = try #require(
        try JSONSerialization.jsonObject(with: Data(s.run(["streams", "--json"]).stdout.utf8)) as? [String: Any])
      let listed = (streams["streams"] as! [[String: Any]]).map { Array(($0["stream"] as! String).utf8) }
      #expect(listed == names.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) })
      let verify = s.run("verify")
      #expect(verify.code == 0 && verify.stdout.hasPrefix("ok: "), "\(verify)")
    }
    try check(s)
    let exported = s.export()
    let copy = Sandbox()
    #expect(copy.run(["import"], stdin: Data(exported.utf8)).code == 0)
    #expect(copy.export() == exported)
    try check(copy)
  }

  func items(_ json: String) throws -> [[String: Any]] {
    let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any]
    return object?["items"] as? [[String: Any]] ?? []
  }
}
