// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "msglog",
  products: [
    .executable(name: "msglog", targets: ["msglog"]),
    .executable(name: "msglog-serve", targets: ["msglog-serve"]),
    .executable(name: "msglog-tls", targets: ["msglog-tls"]),
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
    // libpq (Debian: libpq-dev for the header, libpq5 at run time), loaded
    // on first use rather than linked, so that LMDB users never load it.
    .target(name: "CLibPQ"),
    // GnuTLS (Debian: libgnutls28-dev for the header, libgnutls30 at run
    // time), loaded on the first https:// request rather than linked: the
    // msglog executable is static, and a user who never syncs over TLS
    // never loads it.
    .target(name: "CGnuTLS"),
    // epoll and eventfd (glibc's own headers), for the server's event loops.
    .systemLibrary(name: "CEpoll"),
    // CRC-32C with the CPU's instruction (SSE4.2 / ARM CRC), chosen at run time.
    .target(name: "CCRC32C"),
    // A vector scan over an import's bytes (SSE2 on x86-64), for the
    // measuring pass (`ImportInput.namesLedgerOnly`).
    .target(name: "CByteScan"),
    // The main heap grown once and advised to use huge pages, for a command
    // that fills much fresh memory (an import): glibc's allocator only.
    .target(name: "CHeap"),
    // Events, record codec, projection, replay, validation. No I/O.
    .target(name: "MsglogCore", dependencies: ["CCRC32C"]),
    // The only module that imports CLMDB: a typed wrapper and the event store.
    .target(name: "MsglogLMDB", dependencies: ["MsglogCore", "CLMDB"]),
    // The only module that imports CLibPQ: the event store on PostgreSQL.
    .target(name: "MsglogPostgres", dependencies: ["MsglogCore", "CLibPQ"]),
    // The HTTP/1.1 grammar, once for both ends: one head parser with a
    // request and a response kind, one chunked decoder. No I/O, no
    // dependency, so the fuzzers build it alone.
    .target(name: "MsglogHTTPWire"),
    // TLS over a non-blocking socket, once for both ends: the session, the
    // certificates, GnuTLS's result codes. The only module that imports
    // CGnuTLS.
    .target(name: "MsglogTLS", dependencies: ["CGnuTLS"]),
    // What both ends do with the system the same way: the wake-up pipe
    // (a self-pipe) that cancels a blocked wait or stops a follower.
    .target(name: "MsglogPosix"),
    // An HTTP/1.1 client (http:// and https://, keep-alive, streamed
    // answers, event streams, timeouts and cancellation), for a replica's
    // sync with `msglog serve`. Glibc only, no Foundation.
    .target(name: "MsglogHTTPClient", dependencies: ["MsglogHTTPWire", "MsglogTLS", "MsglogPosix"]),
    // The sync protocol's messages (docs/SYNC.md), typed and encoded once
    // for both ends: the library's remotes and the server's routes. Below
    // the door, since the library's HTTP remote speaks it (MsglogWire
    // stands on the door, so the door cannot use it). No I/O.
    .target(name: "MsglogSyncProtocol", dependencies: ["MsglogCore"]),
    // The front door: `EventLog`, over whichever store a location names.
    .target(
      name: "Msglog",
      dependencies: [
        "MsglogCore", "MsglogSyncProtocol", "MsglogLMDB", "MsglogPostgres", "MsglogHTTPClient", "MsglogPosix",
        "CByteScan",
      ]),
    // The wire shapes: a JSON writer and every document `--json` prints and
    // the server answers, in one place for the command line and the server.
    .target(name: "MsglogWire", dependencies: ["Msglog"]),
    // Argument parsing, output formatting, exit codes.
    .target(name: "MsglogCLI", dependencies: ["Msglog", "MsglogWire", "MsglogPosix", "CHeap"]),
    // A static executable: no dynamic loader work at start-up (symbol
    // lookups in libstdc++ were a third of `msglog --version`), so a msglog
    // process starts faster than sqlite3's. libpq is still loaded on demand.
    .executableTarget(
      name: "msglog", dependencies: ["MsglogCLI"], linkerSettings: [.unsafeFlags(["-static-executable"])]),
    // The HTTP server: routes, the page, event streams, on its own HTTP/1.1
    // engine (epoll). It stands on the library and the wire shapes, not on
    // the command line.
    .target(
      name: "MsglogServer",
      dependencies: ["Msglog", "MsglogWire", "MsglogHTTPWire", "MsglogTLS", "MsglogPosix", "CEpoll"],
      // The page's files, every one in the folder (Page.files serves each);
      // Page/package.json only tells node that the page's .js are modules.
      exclude: ["Page/package.json"], resources: [.embedInCode("Page/Resources")]),
    // `msglog serve`, which `msglog` runs (exec) from beside itself: a
    // dynamic executable (its threads, and GnuTLS for issue 28's TLS, want
    // the dynamic loader). Its main parses `serve`'s options with the
    // command line's declaration table.
    .executableTarget(name: "msglog-serve", dependencies: ["MsglogCLI", "MsglogServer"]),
    // https:// for the static msglog, which cannot run GnuTLS (its
    // thread-local storage needs the dynamic loader): a dynamic helper that
    // the HTTP client runs from beside msglog, one per TLS connection, and
    // relays through (MsglogHTTPClient's TLSRelay).
    .executableTarget(name: "msglog-tls", dependencies: ["MsglogHTTPClient"]),
    // A static executable like msglog that sends https:// requests: the
    // tests run it to show that a static program speaks TLS through
    // msglog-tls (it cannot load GnuTLS itself).
    .executableTarget(
      name: "msglog-tls-probe", dependencies: ["MsglogHTTPClient"], path: "Tests/TLSProbe",
      linkerSettings: [.unsafeFlags(["-static-executable"])]),
    // Benchmarks: built in release by scripts/bench, never part of `swift test`.
    .executableTarget(name: "msglog-bench", dependencies: ["Msglog", "MsglogLoopback"], path: "Sources/MsglogBench"),
    // A TCP client on 127.0.0.1, for the bench's HTTP clients and the tests
    // that send bytes no HTTP client would.
    .target(name: "MsglogLoopback"),
    // What the core's tests need besides the core: the seeded generator.
    .target(name: "MsglogCoreTestSupport", path: "Tests/MsglogCoreTestSupport"),
    // What the other test targets share: temporary directories, the sandbox
    // that runs the binary, event helpers (and the core's support).
    .target(
      name: "MsglogTestSupport",
      dependencies: [
        "Msglog", "MsglogWire", "MsglogLoopback", "MsglogHTTPWire", "MsglogHTTPClient", "MsglogPosix",
        "MsglogCoreTestSupport",
      ],
      path: "Tests/MsglogTestSupport"),
    // Tests by what they test. The core's logic: the codecs, trees, the
    // import scanner, on the core alone (neither LMDB nor libpq is linked).
    .testTarget(name: "MsglogCoreTests", dependencies: ["MsglogCore", "MsglogCoreTestSupport"]),
    // The HTTP/1.1 grammar both ends share, on the wire module alone.
    .testTarget(name: "MsglogHTTPWireTests", dependencies: ["MsglogHTTPWire"]),
    // The sync protocol's messages, each encoded and decoded, on the
    // protocol module alone.
    .testTarget(name: "MsglogSyncProtocolTests", dependencies: ["MsglogSyncProtocol", "MsglogCore"]),
    // The library's door as an app uses it, on `EventLog.inMemory()` and
    // each store: the ledger's rules, group commit, the model differential.
    .testTarget(name: "MsglogLibraryTests", dependencies: ["Msglog", "MsglogCore", "MsglogWire", "MsglogTestSupport"]),
    // Replicas and sync (docs/SYNC.md): the library's replica and remote, in
    // process and over HTTP, and the fault-injecting simulation.
    // Servers/: a malicious remote (a lying proxy before a real serve).
    .testTarget(name: "MsglogSyncTests", dependencies: ["Msglog", "MsglogTestSupport"], exclude: ["Servers"]),
    .testTarget(name: "MsglogLMDBTests", dependencies: ["MsglogLMDB", "Msglog", "MsglogTestSupport"]),
    // The PostgreSQL store, on the throwaway cluster scripts/test starts.
    .testTarget(
      name: "MsglogPostgresTests", dependencies: ["Msglog", "MsglogPostgres", "MsglogLoopback", "MsglogTestSupport"]),
    .testTarget(name: "MsglogWireTests", dependencies: ["MsglogWire", "Msglog", "MsglogTestSupport"]),
    // The server in process (routes, decoding, streams, without a socket)
    // and over real HTTP (the built binary's `msglog serve`).
    .testTarget(
      name: "MsglogServerTests",
      dependencies: ["MsglogServer", "MsglogHTTPWire", "Msglog", "MsglogLoopback", "MsglogTestSupport"]),
    // The HTTP client against the real `msglog serve`, scripted Python
    // servers (plain and TLS) for what serve never sends, and the
    // fault-injecting proxy the sync's simulation runs through.
    .testTarget(
      name: "MsglogHTTPClientTests",
      dependencies: ["MsglogHTTPWire", "MsglogHTTPClient", "MsglogLoopback", "MsglogTestSupport"],
      exclude: ["Servers"]),
    // The page in headless Chromium (Selenium; Tests/Browser/*.py).
    .testTarget(name: "MsglogBrowserTests", dependencies: ["MsglogTestSupport"]),
    // End-to-end tests of the command line. They, and every test that runs
    // the built `msglog` binary, need `swift build --product msglog` first
    // (scripts/test does): no test target depends on the executable, whose
    // static linking would otherwise be applied to the test bundle too.
    .testTarget(name: "MsglogCLITests", dependencies: ["MsglogCLI", "Msglog", "MsglogTestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)

// Every Swift module reaches the metadata of a concrete generic type (a
// `[ItemID: IdEntry]`'s storage) through an accessor function, not by its
// mangled name: the runtime builds a type from its name by looking up each
// conformance it requires (`ItemID: Hashable`) with a linear scan of every
// conformance record of the static binary: without it a one-event
// `append` runs twice the instructions (2.24 M against 1.09 M, `--version`
// 0.54 M against 0.27 M; docs/PERFORMANCE.md). The cost is a little code size.
//
// Only where msglog is built from its own folder (its checkout, a path
// dependency): SwiftPM refuses unsafe flags from a package an app fetched
// by version, so a fetched copy — in the checkouts of SwiftPM's scratch
// directory (`.build` or another) or Xcode's, or a registry's downloads —
// is built without them.
let fetched = ["/checkouts/", "/registry/downloads/"].contains { Context.packageDirectory.contains($0) }
if !fetched {
  for target in package.targets where target.type != .system {
    target.swiftSettings =
      (target.swiftSettings ?? []) + [
        .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])
      ]
  }
}
