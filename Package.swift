// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "msglog",
  products: [
    .executable(name: "msglog", targets: ["msglog"]),
    // The front door: `import Msglog`, open an `EventLog`.
    .library(name: "Msglog", targets: ["Msglog"]),
  ],
  targets: [
    // The system LMDB (Debian: liblmdb-dev, which ships lmdb.pc).
    .systemLibrary(
      name: "CLMDB",
      pkgConfig: "lmdb",
      providers: [.apt(["liblmdb-dev"])]
    ),
    // The system libpq (Debian: libpq-dev, which ships libpq.pc).
    .systemLibrary(
      name: "CLibPQ",
      pkgConfig: "libpq",
      providers: [.apt(["libpq-dev"])]
    ),
    // Events, record codec, projection, replay, validation. No I/O.
    .target(name: "MsglogCore"),
    // The only module that imports CLMDB: a typed wrapper and the event store.
    .target(name: "MsglogLMDB", dependencies: ["MsglogCore", "CLMDB"]),
    // The only module that imports CLibPQ: the event store on PostgreSQL.
    .target(name: "MsglogPostgres", dependencies: ["MsglogCore", "CLibPQ"]),
    // The front door: `EventLog`, over whichever store a location names.
    .target(name: "Msglog", dependencies: ["MsglogCore", "MsglogLMDB", "MsglogPostgres"]),
    // Argument parsing, output formatting, exit codes.
    .target(name: "MsglogCLI", dependencies: ["Msglog"]),
    .executableTarget(name: "msglog", dependencies: ["MsglogCLI"]),
    // Benchmarks: built in release by scripts/bench, never part of `swift test`.
    .executableTarget(name: "msglog-bench", dependencies: ["Msglog"], path: "Sources/MsglogBench"),
    // What the test targets share: temporary directories, the sandbox that
    // runs the binary, the seeded generator, event helpers.
    .target(name: "MsglogTestSupport", dependencies: ["Msglog"], path: "Tests/MsglogTestSupport"),
    .testTarget(name: "MsglogCoreTests", dependencies: ["MsglogCore", "Msglog", "MsglogTestSupport"]),
    .testTarget(name: "MsglogLMDBTests", dependencies: ["MsglogLMDB", "Msglog", "MsglogTestSupport"]),
    // End-to-end tests run the built `msglog` binary; depending on the
    // executable target makes `swift test` build it first.
    .testTarget(name: "MsglogCLITests", dependencies: ["msglog", "MsglogCLI", "Msglog", "MsglogTestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)
