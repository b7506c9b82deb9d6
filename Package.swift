// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "msglog",
  products: [
    .executable(name: "msglog", targets: ["msglog"]),
    .library(name: "MsglogCore", targets: ["MsglogCore"]),
    .library(name: "MsglogLMDB", targets: ["MsglogLMDB"]),
  ],
  targets: [
    // The system LMDB (Debian: liblmdb-dev, which ships lmdb.pc).
    .systemLibrary(
      name: "CLMDB",
      pkgConfig: "lmdb",
      providers: [.apt(["liblmdb-dev"])]
    ),
    // Events, record codec, projection, replay, validation. No I/O.
    .target(name: "MsglogCore"),
    // The only module that imports CLMDB: a typed wrapper and the event store.
    .target(name: "MsglogLMDB", dependencies: ["MsglogCore", "CLMDB"]),
    // Argument parsing, output formatting, exit codes.
    .target(name: "MsglogCLI", dependencies: ["MsglogCore", "MsglogLMDB"]),
    .executableTarget(name: "msglog", dependencies: ["MsglogCLI"]),
    // Benchmarks: built in release by scripts/bench, never part of `swift test`.
    .executableTarget(name: "msglog-bench", dependencies: ["MsglogCore", "MsglogLMDB"], path: "Sources/MsglogBench"),
    .testTarget(name: "MsglogCoreTests", dependencies: ["MsglogCore"]),
    .testTarget(name: "MsglogLMDBTests", dependencies: ["MsglogLMDB", "MsglogCore"]),
    // End-to-end tests run the built `msglog` binary; depending on the
    // executable target makes `swift test` build it first.
    .testTarget(name: "MsglogCLITests", dependencies: ["msglog", "MsglogCLI", "MsglogCore"]),
  ],
  swiftLanguageModes: [.v6]
)
