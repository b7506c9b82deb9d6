import Foundation
import Testing

@testable import MsglogCore
@testable import MsglogLMDB

/// A fresh directory per test; LMDB must not open one environment twice in a process.
final class TemporaryDirectory {
  let path: String

  init() {
    path = NSTemporaryDirectory() + "msglog-test-" + UUID().uuidString
    try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(atPath: path) }

  var db: String { path + "/db.lmdb" }
}

func perform(
  _ requests: [WriteRequest], on store: some EventStore, at ms: Int64 = 1000, checkpointInterval: UInt64 = 256
) throws -> [Outcome?] {
  try store.write { writer in
    let session = try LedgerSession(
      writer: writer, now: Timestamp(milliseconds: ms), checkpointInterval: checkpointInterval)
    let outcomes = try requests.map { try session.perform($0) }
    try session.finish()
    return outcomes
  }
}

func exportLines(_ store: some EventStore) throws -> [String] {
  try store.read { reader in
    var lines: [String] = []
    try reader.forEachEvent(from: 1) {
      lines.append($0.jsonLine)
      return true
    }
    return lines
  }
}

/// A deterministic mixed workload over two streams (fixed ids, so two stores get identical logs).
func workload(count: Int) -> [WriteRequest] {
  var sizes: [StreamName: Int] = ["a": 0, "b": 0]
  var requests: [WriteRequest] = []
  var ids: [StreamName: [ItemID]] = ["a": [], "b": []]
  for i in 0..<count {
    let stream: StreamName = i % 3 == 0 ? "b" : "a"
    let n = sizes[stream]!
    let id = ItemID(canonical: String(format: "00000000-0000-4000-8000-%012x", i))!
    switch i % 5 {
    case 3 where n > 1:
      requests.append(
        WriteRequest(stream: stream, command: .move(from: UInt64(i % n), to: UInt64((i * 7) % n), id: nil)))
      if i % n != (i * 7) % n { let x = ids[stream]!.remove(at: i % n); ids[stream]!.insert(x, at: (i * 7) % n) }
    case 4 where n > 2:
      requests.append(WriteRequest(stream: stream, command: .remove(.id(ids[stream]![n / 2]))))
      ids[stream]!.remove(at: n / 2)
      sizes[stream] = n - 1
    default:
      let index = UInt64(i % (n + 1))
      requests.append(
        WriteRequest(
          stream: stream,
          command: .insert(InsertRequest(index: index, text: "m\(i) ✓", sender: i % 2 == 0 ? "ann" : nil, id: id))))
      ids[stream]!.insert(id, at: Int(index))
      sizes[stream] = n + 1
    }
  }
  return requests
}

@Suite struct LMDBStoreTests {
  @Test func appendsReadsBackAndReopens() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try LMDBStore(path: dir.db, create: true)
      _ = try perform(
        [WriteRequest(stream: "main", command: .insert(InsertRequest(text: "hello", sender: "ann")))], on: store)
      _ = try perform(
        [WriteRequest(stream: "main", command: .insert(InsertRequest(index: 0, text: "first")))], on: store)
    }
    let reopened = try LMDBStore(path: dir.db, create: false)
    let snapshot = try reopened.read { try CurrentView.stream("main", in: $0) }
    #expect(snapshot.items.map(\.text) == ["first", "hello"])
    #expect(snapshot.items.map(\.sender) == [nil, "ann"])
    #expect(snapshot.seq == 2)
    #expect(snapshot.version == 2)
    #expect(try reopened.read { try $0.headSeq() } == 2)
  }

  /// The same workload on LMDB and in memory: same log, and replay at every
  /// seq equal; derived tables agree with a replay.
  @Test func replayAtEverySeqMatchesTheInMemoryStore() throws {
    let dir = TemporaryDirectory()
    let disk = try LMDBStore(path: dir.db, create: true)
    let memory = MemoryStore()
    let requests = workload(count: 120)
    for (i, request) in requests.enumerated() {
      // Checkpoints every few events, so that replay --at starts from them.
      let a = try perform([request], on: disk, at: Int64(i), checkpointInterval: 4)
      let b = try perform([request], on: memory, at: Int64(i), checkpointInterval: 4)
      #expect(a == b)
    }
    #expect(try exportLines(disk) == exportLines(memory))
    let head = try disk.read { try $0.headSeq() }
    #expect(head > 100)
    for seq in 0...head {
      for stream: StreamName in ["a", "b", "missing"] {
        let replayed = try disk.read { try Replay.stream(stream, at: seq, in: $0) }
        #expect(replayed == (try memory.read { try Replay.stream(stream, at: seq, in: $0) }))
      }
    }
    for stream: StreamName in ["a", "b"] {
      let current = try disk.read { try CurrentView.stream(stream, in: $0) }
      #expect(current == (try disk.read { try Replay.stream(stream, at: nil, in: $0) }))
    }
    let report = try disk.read { try Verifier.verify($0) }
    #expect(report.isClean, "\(report.problems)")
    #expect(report.events == head)
    #expect(try disk.read { try $0.checkpointSeqs(of: "a") }.count > 3)
  }

  /// A stream of thousands of items on disk: the order tree has several
  /// levels; list, replay --at, verify and a rebuild all agree with a model.
  @Test func aLargeStreamOnDisk() throws {
    let dir = TemporaryDirectory()
    let store = try LMDBStore(path: dir.db, create: true)
    var model: [ItemID] = []
    var state: UInt64 = 42
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    var requests: [WriteRequest] = []
    for step in 0..<12_000 {
      if model.count < 20 || next(10) < 6 {
        let index = next(model.count + 1)
        let id = ItemID()
        model.insert(id, at: index)
        requests.append(
          WriteRequest(stream: "big", command: .insert(InsertRequest(index: UInt64(index), text: "i\(step)", id: id))))
      } else if next(2) == 0 {
        let index = next(model.count)
        requests.append(WriteRequest(stream: "big", command: .remove(.id(model.remove(at: index)))))
      } else {
        let from = next(model.count), to = next(model.count)
        if from == to { continue }
        model.insert(model.remove(at: from), at: to)
        requests.append(WriteRequest(stream: "big", command: .move(from: UInt64(from), to: UInt64(to), id: nil)))
      }
    }
    // In batches, as import and append --lines do, with small checkpoints.
    for start in stride(from: 0, to: requests.count, by: 1000) {
      _ = try perform(Array(requests[start..<min(start + 1000, requests.count)]), on: store, checkpointInterval: 64)
    }
    #expect(model.count > 2000)
    let current = try store.read { try CurrentView.stream("big", in: $0) }
    #expect(current.items.map(\.id) == model)
    #expect(try store.read { try Replay.stream("big", at: nil, in: $0) } == current)
    #expect(try store.read { try Replay.stream("big", at: UInt64(requests.count), in: $0) } == current)
    #expect(try store.read { try Verifier.verify($0) }.isClean)
    // One more command touches a few nodes, not the whole order.
    _ = try perform(
      [WriteRequest(stream: "big", command: .move(from: 0, to: UInt64(model.count - 1), id: nil))], on: store)
    model.append(model.removeFirst())
    #expect(try store.read { try CurrentView.stream("big", in: $0) }.items.map(\.id) == model)
    try store.write { try DerivedState.rebuild($0) }
    #expect(try store.read { try Verifier.verify($0) }.isClean)
    #expect(try store.read { try CurrentView.stream("big", in: $0) }.items.map(\.id) == model)
  }

  @Test func theMapGrowsBySelf() throws {
    let dir = TemporaryDirectory()
    let store = try LMDBStore(path: dir.db, create: true)
    #expect(store.mapSize == LMDBStore.initialMapSize)
    let big = String(repeating: "x", count: Limits.maxTextBytes)
    for _ in 0..<6 {
      _ = try perform([WriteRequest(stream: "main", command: .insert(InsertRequest(text: big)))], on: store)
    }
    #expect(store.mapSize >= 8 * LMDBStore.initialMapSize)
    #expect(try store.read { try Verifier.verify($0) }.isClean)
    #expect(try store.read { try CurrentView.stream("main", in: $0) }.items.count == 6)
  }

  @Test func filesArePrivateToTheOwner() throws {
    let dir = TemporaryDirectory()
    _ = try perform(
      [WriteRequest(stream: "main", command: .insert(InsertRequest(text: "secret")))],
      on: try LMDBStore(path: dir.db, create: true))
    let fm = FileManager.default
    #expect((try fm.attributesOfItem(atPath: dir.db)[.posixPermissions] as? Int) == 0o700)
    for file in ["data.mdb", "lock.mdb"] {
      #expect((try fm.attributesOfItem(atPath: dir.db + "/" + file)[.posixPermissions] as? Int) == 0o600)
    }
  }

  @Test func readersNeverCreateAnything() throws {
    let dir = TemporaryDirectory()
    #expect(throws: MsglogError.self) { try LMDBStore(path: dir.db, create: false) }
    #expect(!FileManager.default.fileExists(atPath: dir.db))
    try FileManager.default.createDirectory(atPath: dir.db, withIntermediateDirectories: false)
    #expect(throws: MsglogError.self) { try LMDBStore(path: dir.db, create: false) }
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.db).isEmpty)
  }

  @Test func refusesWhatIsNotAMsglogDatabase() throws {
    let dir = TemporaryDirectory()
    let file = dir.path + "/file"
    FileManager.default.createFile(atPath: file, contents: Data("hi".utf8))
    for create in [false, true] {
      #expect(throws: MsglogError.self) { try LMDBStore(path: file, create: create) }
    }
    let other = dir.path + "/other"
    try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
    FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("x".utf8))
    #expect(throws: MsglogError.self) { try LMDBStore(path: other, create: true) }
    let garbage = dir.path + "/garbage"
    try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: false)
    FileManager.default.createFile(atPath: garbage + "/data.mdb", contents: Data(repeating: 0x41, count: 16384))
    #expect(throws: MsglogError.self) { try LMDBStore(path: garbage, create: false) }
    // An LMDB environment that msglog did not make.
    let foreign = dir.path + "/foreign"
    try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
    do {
      let env = try Environment(path: foreign, readOnly: false, maxDatabases: 2, mapSize: 1 << 20)
      try env.write { txn in
        let db = try env.openDatabase("stuff", create: true, in: txn)!
        try txn.put(db, Array("k".utf8), Array("v".utf8))
      }
    }
    #expect(throws: MsglogError.self) { try LMDBStore(path: foreign, create: false) }
  }

  /// A byte flipped inside a record on disk: verify names the seq, replay refuses.
  @Test func detectsABitFlippedOnDisk() throws {
    let dir = TemporaryDirectory()
    do {
      let store = try LMDBStore(path: dir.db, create: true)
      for text in ["alpha", "MARKER-bravo-7q", "charlie"] {
        _ = try perform([WriteRequest(stream: "main", command: .insert(InsertRequest(text: text)))], on: store)
      }
    }
    let dataPath = dir.db + "/data.mdb"
    var data = try Data(contentsOf: URL(fileURLWithPath: dataPath))
    let marker = Data("MARKER-bravo-7q".utf8)
    // Copy-on-write leaves stale copies of the page in free space: damage every copy.
    var searchFrom = data.startIndex
    var flipped = 0
    while let range = data.range(of: marker, in: searchFrom..<data.endIndex) {
      data[range.lowerBound + 7] ^= 0x20  // "bravo" -> "Bravo"
      searchFrom = range.upperBound
      flipped += 1
    }
    #expect(flipped > 0)
    try data.write(to: URL(fileURLWithPath: dataPath))
    let store = try LMDBStore(path: dir.db, create: false)
    let report = try store.read { try Verifier.verify($0) }
    #expect(report.problems.first?.hasPrefix("seq 2: corrupted record") == true, "\(report.problems)")
    let error = try #require(throws: MsglogError.self) { try store.read { try Replay.stream("main", at: nil, in: $0) } }
    #expect(error.message.contains("seq 2"))
    #expect(try store.read { try Replay.stream("main", at: 1, in: $0) }.items.map(\.text) == ["alpha"])
  }
}
