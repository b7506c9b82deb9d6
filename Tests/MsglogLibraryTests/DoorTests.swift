import Foundation
import MsglogTestSupport
import Testing

/// The library's door as an app outside this package sees it, from the
/// modules `swift build` made: the model and `EventLog`, never the
/// machinery (which is `package`, for this package's command line, server,
/// benchmark and tests).
@Suite struct DoorTests {
  /// The public types of each module an app reaches with `import Msglog`.
  /// A type added here is a promise to every app: add it on purpose.
  static let publicTypes: [String: [String]] = [
    "MsglogCore": [
      "BackupRefusal", "DerivedDamage", "Event", "InsertRequest", "InvalidInput", "Item", "ItemChange", "ItemID",
      "ItemSelector", "LMDBFailure", "ListChange", "ListUpdate", "LogAccess", "MsglogError", "Outcome",
      "StreamContents", "StreamDiff", "StreamName", "Timestamp", "VerifyProgress", "VerifyReport", "WriteRequest",
      // Sync's (docs/SYNC.md).
      "ChangeOutcome", "ChangeRefusal", "Origin", "RemoteFault", "ReplicaChange", "ReplicaState",
      // A server's refusal of a privilege, and what `EventLog.initialize()` did (docs/POSTGRES.md).
      "MissingPrivileges", "LogInitialization",
      // Named tokens (docs/SERVER.md, "Running it for a team").
      "NamedToken", "StreamPattern", "TokenLifetime", "TokenRefusal", "TokenScopes", "TokenSecret",
    ],
    "Msglog": [
      "EventLog", "FollowNotice", "FollowStop", "ImportResult", "LogSnapshot", "LogStream", "NewItem",
      "StreamCounters",
      // Sync's (docs/SYNC.md).
      "SyncOptions",
    ],
    // The sync protocol's messages that were the door's before they had a
    // module of their own (the rest of it is the machinery's).
    "MsglogSyncProtocol": ["PushAnswer", "RecordPage", "RemoteHello"],
    // Machinery the door uses and never shows: the HTTP client and its
    // wire (the HTTP remote's, the command line's, msglog-tls's) and the
    // PostgreSQL store are `package`, nothing of theirs public.
    "MsglogHTTPClient": [], "MsglogHTTPWire": [], "MsglogPostgres": [],
  ]

  /// What a compiler outside the package needs to load the built modules:
  /// their directory and the C modules' maps, as SwiftPM passes them.
  static var moduleFlags: [String] {
    let build = repositoryRoot + "/.build/debug"
    var flags = ["-I", build + "/Modules"]
    for (map, include) in [
      (build + "/CLibPQ.build/module.modulemap", repositoryRoot + "/Sources/CLibPQ/include"),
      (build + "/CCRC32C.build/module.modulemap", repositoryRoot + "/Sources/CCRC32C/include"),
      (build + "/CByteScan.build/module.modulemap", repositoryRoot + "/Sources/CByteScan/include"),
      (build + "/CGnuTLS.build/module.modulemap", repositoryRoot + "/Sources/CGnuTLS/include"),
      (repositoryRoot + "/Sources/CLMDB/module.modulemap", repositoryRoot + "/Sources/CLMDB"),
    ] {
      flags += ["-Xcc", "-fmodule-map-file=" + map, "-Xcc", "-I", "-Xcc", include]
    }
    return flags
  }

  static var target: String {
    var name = utsname()
    uname(&name)
    let machine = withUnsafeBytes(of: name.machine) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return machine + "-unknown-linux-gnu"
  }

  /// Type-checks `source` as a file of a module outside the package.
  static func typecheck(_ source: String) throws -> Run {
    let dir = TemporaryDirectory()
    let file = dir.path + "/App.swift"
    try source.write(toFile: file, atomically: true, encoding: .utf8)
    return runToolchain(
      ["swiftc", "-typecheck", "-swift-version", "6", "-module-name", "App", file] + moduleFlags, scratch: dir.path)
  }

  @Test func theModulesShowTheModelAndTheDoorOnly() throws {
    let dir = TemporaryDirectory()
    for (module, expected) in Self.publicTypes {
      let r = runToolchain(
        [
          "swift-symbolgraph-extract", "-module-name", module, "-target", Self.target, "-minimum-access-level",
          "public", "-output-dir", dir.path,
        ] + Self.moduleFlags, scratch: dir.path)
      #expect(r.code == 0, "\(r)")
      let data = try Data(contentsOf: URL(fileURLWithPath: dir.path + "/\(module).symbols.json"))
      let graph = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
      let symbols = try #require(graph["symbols"] as? [[String: Any]])
      let types = Set(
        symbols.compactMap { symbol -> String? in
          guard let path = symbol["pathComponents"] as? [String], path.count == 1,
            let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String,
            ["swift.struct", "swift.enum", "swift.class", "swift.protocol", "swift.typealias"].contains(kind)
          else { return nil }
          return path[0]
        })
      #expect(
        types == Set(expected),
        "\(module): public beyond the list: \(types.subtracting(expected).sorted()); missing: \(Set(expected).subtracting(types).sorted())"
      )
      // Nor a public function or variable outside a type.
      let loose = symbols.compactMap { symbol -> String? in
        guard let path = symbol["pathComponents"] as? [String], path.count == 1,
          let kind = (symbol["kind"] as? [String: Any])?["identifier"] as? String,
          ["swift.func", "swift.var"].contains(kind)
        else { return nil }
        return path[0]
      }
      #expect(loose.isEmpty, "\(module): \(loose)")
    }
  }

  /// GUIDE.md's "Use it from Swift" builds in an app — the example and the
  /// configuration — so everything they name is public.
  @Test func theReadmeExamplesBuildOutsideThePackage() throws {
    let readme = try String(contentsOfFile: repositoryRoot + "/docs/GUIDE.md", encoding: .utf8)
    var bodies: [Substring] = []
    for opening in ["```swift\nimport Msglog\n", "```swift\nvar configuration"] {
      let start = try #require(readme.range(of: opening))
      let end = try #require(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
      bodies.append(readme[readme.index(start.lowerBound, offsetBy: 9)..<end.lowerBound])
    }
    let functions = bodies.enumerated().map { "func example\($0.offset)() async throws {\n\($0.element)}\n" }
    let r = try Self.typecheck(
      "import Msglog\n\n" + functions.joined(separator: "\n").replacing("import Msglog\n", with: ""))
    #expect(r.code == 0, "\(r)")
  }

  /// The door asks a store what it can do (EventStore's abilities), never
  /// which class it is: a third store is one conformance, not a hunt.
  @Test func theDoorNeverDowncastsItsStore() throws {
    let door = repositoryRoot + "/Sources/Msglog"
    let files = try #require(FileManager.default.enumerator(atPath: door)).compactMap { $0 as? String }
    #expect(files.count > 20)
    for file in files where file.hasSuffix(".swift") {
      let source = try String(contentsOfFile: door + "/" + file, encoding: .utf8)
      let casts = source.matches(of: /(?:as[?!]|\bis) +(?:LMDB|Postgres|Memory)Store\b/).map { String($0.output) }
      #expect(casts.isEmpty, "Sources/Msglog/\(file): \(casts)")
    }
  }

  /// And the machinery is out of an app's reach, each piece by name.
  @Test func theMachineryIsOutOfReach() throws {
    let uses = [
      "LedgerSession.self", "EventRecord.self", "DerivedRows.self", "MemoryStore.self", "Replay.self",
      "CurrentView.self", "Verifier.self", "Integrity.self", "JSONObjectWriter.self", "TerminalText.self",
      "Limits.self", "CountedTree<NodePool<Int>>.self", "LMDBStore.self", "PostgresStore.self", "(any LogReader).self",
      "(any EventStore).self", "log.store", "StreamName(String(\"x\"))", "PushRequest.self", "SyncProtocol.self",
      "SyncRefusal.self",
    ]
    let source =
      "import Msglog\n\nfunc machinery(_ log: EventLog) {\n"
      + uses.enumerated().map { "  let _: Any = \($0.element)  // use \($0.offset)" }.joined(separator: "\n") + "\n}\n"
    let r = try Self.typecheck(source)
    #expect(r.code != 0)
    let errors = (r.stdout + r.stderr).split(separator: "\n").filter { $0.contains(": error: ") }
    let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
    for (offset, use) in uses.enumerated() {
      let line = try #require(lines.firstIndex { $0.hasSuffix("// use \(offset)") }) + 1
      #expect(errors.contains { $0.contains("App.swift:\(line):") }, "an app can use \(use)")
    }
  }
}
