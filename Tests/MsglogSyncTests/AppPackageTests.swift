import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// The docs' Swift as an app developer takes it: a package of its own that
/// depends on this checkout by path with GUIDE.md's two lines, built by
/// `swift build` in Swift 6 language mode with warnings as errors (msglog's
/// own code included: a warning there shows in every app's build), each
/// doc's code taken from the doc itself — GUIDE.md's, SWIFT.md's and
/// SYNC.md's "In an app", as the top-level code of an executable each,
/// which is main-actor code in Swift 6 as an app's is — then run: GUIDE.md's
/// in an empty directory, SWIFT.md's on a log, SYNC.md's live chat screen
/// on a replica of a real `msglog serve` while another writer writes there.
///
/// The free names the docs use (`documents`, `remote`, `render`, …) come
/// from a prelude per executable, the app's own code.
@Suite(.serialized) struct AppPackageTests {
  /// Where the package and its build stay between runs, beside this
  /// checkout's own build: a first build of msglog's modules takes
  /// minutes, the next only what changed. `checkout` is a link to this
  /// checkout, in a folder not named msglog.
  static let home = repositoryRoot + "/.build/outside-app"

  /// The ```swift blocks of a doc, those after the heading `section` (up
  /// to the next heading of its level) when given.
  static func swiftBlocks(of doc: String, section: String? = nil) throws -> [String] {
    var text = try String(contentsOfFile: repositoryRoot + "/" + doc, encoding: .utf8)
    if let section {
      let start = try #require(text.range(of: "\n" + section + "\n"), "\(doc) has no \(section)")
      let level = section.prefix { $0 == "#" } + " "
      let rest = text[start.upperBound...]
      let end = rest.range(of: "\n" + level)?.lowerBound ?? rest.endIndex
      text = String(rest[..<end])
    }
    var blocks: [String] = []
    var rest = text[...]
    while let open = rest.range(of: "```swift\n") {
      let close = try #require(rest[open.upperBound...].range(of: "\n```\n"), "an unclosed block in \(doc)")
      blocks.append(String(rest[open.upperBound..<close.lowerBound]) + "\n")
      rest = rest[close.upperBound...]
    }
    return blocks
  }

  /// Blocks as one main.swift: their imports first, then their code.
  static func mainSwift(_ blocks: [String]) -> String {
    var imports: [String] = []
    var code: [String] = []
    for line in blocks.joined(separator: "\n").split(separator: "\n", omittingEmptySubsequences: false) {
      if line.hasPrefix("import ") {
        if !imports.contains(String(line)) { imports.append(String(line)) }
      } else {
        code.append(String(line))
      }
    }
    return imports.joined(separator: "\n") + "\n" + code.joined(separator: "\n")
  }

  /// GUIDE.md's dependency lines, the one for `.package` pointing at `path`.
  static func dependencyLines(at path: String) throws -> (package: String, product: String) {
    let block = try #require(
      try swiftBlocks(of: "docs/GUIDE.md", section: "## Use it from Swift").first { $0.hasPrefix(".package(") })
    // Each line without its comment and final comma: an expression.
    let lines = block.split(separator: "\n").map { line in
      let code = line.range(of: " //").map { line[..<$0.lowerBound] } ?? line
      return code.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: [","])
    }
    let package = try #require(lines.first { $0.hasPrefix(".package(") })
    let product = try #require(lines.first { $0.hasPrefix(".product(") })
    #expect(package.contains(#""../msglog""#), "\(package)")
    return (package.replacing(#""../msglog""#, with: "\"\(path)\""), product)
  }

  static func manifest(_ dependency: (package: String, product: String), targets: [String]) -> String {
    """
    // swift-tools-version:6.0
    import PackageDescription

    let package = Package(
      name: "ChatApp",
      dependencies: [
        \(dependency.package)
      ],
      targets: [
    \(targets.map { "    .executableTarget(name: \"\($0)\", dependencies: [\(dependency.product)])," }.joined(separator: "\n"))
      ]
    )

    """
  }

  /// Writes the package (GUIDE.md's lines, the docs' code, the preludes).
  static func writePackage() throws -> String {
    let manager = FileManager.default
    let app = home + "/ChatApp"
    try? manager.removeItem(atPath: app + "/Sources")
    try manager.createDirectory(atPath: app, withIntermediateDirectories: true)
    if (try? manager.destinationOfSymbolicLink(atPath: home + "/checkout")) != repositoryRoot {
      try? manager.removeItem(atPath: home + "/checkout")
      try manager.createSymbolicLink(atPath: home + "/checkout", withDestinationPath: repositoryRoot)
    }
    let sources: [String: [String: String]] = [
      "Readme": [
        "main.swift": mainSwift(
          try swiftBlocks(of: "docs/GUIDE.md", section: "## Use it from Swift").filter { !$0.hasPrefix(".package(") })
      ],
      "SwiftDoc": ["main.swift": mainSwift(try swiftBlocks(of: "docs/SWIFT.md")), "Prelude.swift": Prelude.swiftDoc],
      "SyncDoc": [
        "main.swift": mainSwift(try swiftBlocks(of: "docs/SYNC.md", section: "## In an app")),
        "Prelude.swift": Prelude.syncDoc,
      ],
    ]
    for (target, files) in sources {
      try manager.createDirectory(atPath: app + "/Sources/" + target, withIntermediateDirectories: true)
      for (name, text) in files {
        try text.write(toFile: app + "/Sources/\(target)/\(name)", atomically: true, encoding: .utf8)
      }
    }
    let written = manifest(try dependencyLines(at: "../checkout"), targets: sources.keys.sorted())
    try written.write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
    return app
  }

  static func build(_ app: String) -> Run {
    let scratch = TemporaryDirectory()
    return runToolchain(
      [
        "timeout", "1800", "swift", "build", "--package-path", app, "--scratch-path", home + "/.build", "-Xswiftc",
        "-warnings-as-errors",
      ], scratch: scratch.path)
  }

  /// The package builds, and its programs run as the docs say.
  @Test func theDocsBuildAndRunInAnAppOfItsOwn() throws {
    let app = try Self.writePackage()
    let built = Self.build(app)
    #expect(built.code == 0, "\(built)")
    guard built.code == 0 else { return }
    let bin = Self.home + "/.build/debug/"

    // GUIDE.md's example, in a first launch's empty directory.
    let dir = TemporaryDirectory()
    let readme = runProgram("/usr/bin/env", ["sh", "-c", "cd '\(dir.path)' && exec timeout 300 '\(bin)Readme'"])
    #expect(readme.code == 0, "\(readme)")
    #expect(
      readme.lines == [
        "bob Yes, room 4B.", "ann Morning! Review at 11?", "someone else changed it: version 3, not 2",
        "Yes, room 4B. / Morning! Review at 11?",
      ], "\(readme)")

    // SWIFT.md's, on a log of its own: the outcome, then the live list.
    let documents = TemporaryDirectory()
    let swiftDoc = runProgram("/usr/bin/env", ["APP_DOCUMENTS=" + documents.path, "timeout", "300", bin + "SwiftDoc"])
    #expect(swiftDoc.code == 0, "\(swiftDoc)")
    #expect(swiftDoc.lines.first == "at seq 1" && swiftDoc.stdout.contains("render: Morning!\n"), "\(swiftDoc)")

    try runTheChatScreen(bin + "SyncDoc")
  }

  /// SYNC.md's app against a replica of a real serve: clone, an offline
  /// move, a sync; then the live screen with its live sync, its own
  /// message written pending and bob's written at the server meanwhile.
  /// Every list it shows has each id once; it ends showing what the
  /// server has, nothing pending.
  func runTheChatScreen(_ program: String) throws {
    let server = Sandbox()
    for n in 0..<5 { #expect(server.run(["append", "--stream", "chat", "--sender", "bob", "m\(n)"]).code == 0) }
    let served = try ServedLog.running(server)
    defer { _ = served.stop() }
    let documents = TemporaryDirectory()
    let run = runProgram(
      "/usr/bin/env",
      [
        "APP_DOCUMENTS=" + documents.path, "APP_REMOTE=" + (served.url ?? ""), "APP_SERVER_DB=" + server.db,
        "timeout", "300", program,
      ])
    #expect(run.code == 0, "\(run)")
    let renders = run.lines.filter { $0.hasPrefix("render: ") }
    #expect(!renders.isEmpty && run.lines.last == "settled", "\(run)")
    for line in renders {
      #expect(line.components(separatedBy: "on the train, back at 6").count <= 2, "\(line)")
    }
    // Its own message, confirmed: shown once, no longer pending.
    let mine = "on the train, back at 6"
    #expect(renders.last.map { $0.contains(mine) && !$0.contains(mine + "*") } == true, "\(run)")
    let list = server.run(["list", "--stream", "chat"])
    #expect(list.stdout.contains("from bob at the server") && list.stdout.contains("on the train, back at 6"))
  }

  /// An app may fetch msglog by version: SwiftPM refuses a fetched
  /// package's unsafe flags ("the target 'Msglog' in product 'Msglog'
  /// contains unsafe build flags"), which msglog's own builds use
  /// (Package.swift), so a fetched copy must be built without them. A
  /// clone of this checkout with this manifest, tagged, stands for the
  /// published package; the app builds in a scratch folder of its own
  /// choosing (`--scratch-path`), not `.build`.
  @Test func anAppMayFetchItByVersion() throws {
    let dir = TemporaryDirectory()
    let published = dir.path + "/published"
    let git = { (arguments: [String]) in
      runProgram(
        "/usr/bin/env",
        ["git", "-C", published, "-c", "user.name=test", "-c", "user.email=test@localhost"] + arguments)
    }
    let cloned = runProgram("/usr/bin/env", ["git", "clone", "-q", repositoryRoot, published])
    try #require(cloned.code == 0, "\(cloned)")
    try FileManager.default.removeItem(atPath: published + "/Package.swift")
    try FileManager.default.copyItem(atPath: repositoryRoot + "/Package.swift", toPath: published + "/Package.swift")
    try #require(git(["commit", "-q", "--allow-empty", "-am", "this manifest"]).code == 0)
    try #require(git(["tag", "1.0.0"]).code == 0)
    try FileManager.default.createDirectory(atPath: dir.path + "/App/Sources/App", withIntermediateDirectories: true)
    try "import Msglog\n\nprint(try EventLog.inMemory().items().items.count)\n".write(
      toFile: dir.path + "/App/Sources/App/main.swift", atomically: true, encoding: .utf8)
    let fetched = (
      package: #".package(url: "file://\#(published)", from: "1.0.0")"#,
      product: #".product(name: "Msglog", package: "published")"#
    )
    try Self.manifest(fetched, targets: ["App"]).write(
      toFile: dir.path + "/App/Package.swift", atomically: true, encoding: .utf8)
    let built = runToolchain(
      [
        "timeout", "1800", "swift", "build", "--package-path", dir.path + "/App", "--scratch-path",
        dir.path + "/scratch",
      ], scratch: dir.path)
    #expect(built.code == 0 && !built.stderr.contains("unsafe build flags"), "\(built)")
    let ran = runProgram(dir.path + "/scratch/debug/App", [])
    #expect(ran.code == 0 && ran.stdout == "0\n", "\(ran)")
  }

  /// The other side of `anAppMayFetchItByVersion`: msglog built from its
  /// own folder keeps the flag that halves a small command's instructions
  /// (Package.swift), on every Swift target — a manifest whose test for a
  /// fetched copy caught its own checkout too would lose it silently.
  @Test func itsOwnBuildKeepsTheMetadataAccessorFlag() throws {
    let dir = TemporaryDirectory()
    // A scratch folder of its own: `swift test` holds `.build`'s lock.
    let dumped = runToolchain(
      ["swift", "package", "--package-path", repositoryRoot, "--scratch-path", dir.path, "dump-package"],
      scratch: dir.path)
    try #require(dumped.code == 0, "\(dumped)")
    let manifest = try #require(
      JSONSerialization.jsonObject(with: Data(dumped.stdout.utf8)) as? [String: Any])
    let targets = try #require(manifest["targets"] as? [[String: Any]])
    let built = targets.filter { $0["type"] as? String != "system" }
    #expect(built.count > 10)
    for target in built {
      let settings = target["settings"] as? [[String: Any]] ?? []
      let flags = settings.compactMap { setting -> [String]? in
        guard setting["tool"] as? String == "swift", let kind = setting["kind"] as? [String: Any],
          let unsafe = kind["unsafeFlags"] as? [String: Any]
        else { return nil }
        return unsafe["_0"] as? [String]
      }
      #expect(
        flags.contains(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"]),
        "\(target["name"] ?? "?"): \(settings)")
    }
  }

  /// GUIDE.md's warning is true: without `name:`, a checkout in a folder not
  /// named msglog is not `package: "msglog"`.
  @Test func withoutANameTheFolderNamesThePackage() throws {
    let dir = TemporaryDirectory()
    try FileManager.default.createSymbolicLink(atPath: dir.path + "/checkout", withDestinationPath: repositoryRoot)
    try FileManager.default.createDirectory(atPath: dir.path + "/App/Sources/App", withIntermediateDirectories: true)
    try "import Msglog\n".write(toFile: dir.path + "/App/Sources/App/main.swift", atomically: true, encoding: .utf8)
    let named = try Self.dependencyLines(at: "../checkout")
    let unnamed = (package: #".package(path: "../checkout")"#, product: named.product)
    try Self.manifest(unnamed, targets: ["App"]).write(
      toFile: dir.path + "/App/Package.swift", atomically: true, encoding: .utf8)
    let refused = runToolchain(
      ["swift", "package", "--package-path", dir.path + "/App", "describe"], scratch: dir.path)
    #expect(refused.code != 0 && refused.stderr.contains("unknown package 'msglog'"), "\(refused)")
    #expect(refused.stderr.contains("valid packages are: 'checkout'"), "\(refused)")
    try Self.manifest(named, targets: ["App"]).write(
      toFile: dir.path + "/App/Package.swift", atomically: true, encoding: .utf8)
    let described = runToolchain(
      ["swift", "package", "--package-path", dir.path + "/App", "describe"], scratch: dir.path)
    #expect(described.code == 0, "\(described)")
  }
}
