import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogCore
@testable import MsglogLMDB

/// One log per database (LMDB must not open an environment twice in a
/// process), with a clock the test sets.
struct DiskLog {
  let clock = TestClock()
  let log: EventLog

  init(_ path: String, checkpointInterval: Int = 256) throws {
    log = try EventLog(path, configuration: .init(clock: clock.now, checkpointInterval: checkpointInterval))
  }

  @discardableResult
  func perform(_ requests: [WriteRequest], at ms: Int64 = 1000) throws -> [Outcome?] {
    clock.set(ms)
    return try log.perform(requests)
  }
}

@Suite struct LMDBStoreTests {
  @Test func appendsReadsBackAndReopens() throws {
    let dir = TemporaryDirectory()
    do {
      let log = try EventLog(dir.db)
      try log.append("hello", sender: "ann")
      try log.insert("first", at: 0)
    }
    let reopened = try EventLog(dir.db, configuration: .init(access: .readOnly))
    let snapshot = try reopened.items()
    #expect(snapshot.items.map(\.text) == ["first", "hello"])
    #expect(snapshot.items.map(\.sender) == [nil, "ann"])
    #expect(snapshot.seq == 2)
    #expect(snapshot.version == 2)
    #expect(try reopened.headSeq() == 2)
  }

  /// The same workload on LMDB and in memory: same log, and replay at every
  /// seq equal; derived tables agree with a replay.
  @Test func replayAtEverySeqMatchesTheInMemoryStore() throws {
    let dir = TemporaryDirectory()
    // Checkpoints every few events, so that replay --at starts from them.
    let disk = try DiskLog(dir.db, checkpointInterval: 4)
    let clock = TestClock()
    let memory = EventLog.inMemory(clock: clock, checkpointInterval: 4)
    let requests = workload(count: 120)
    for (i, request) in requests.enumerated() {
      let a = try disk.perform([request], at: Int64(i))
      clock.set(Int64(i))
      let b = try memory.perform([request])
      #expect(a == b)
    }
    #expect(try disk.log.exportLines() == memory.exportLines())
    let head = try disk.log.headSeq()
    #expect(head > 100)
    for seq in 0...head {
      for stream: StreamName in ["a", "b", "missing"] {
        #expect(try disk.log.replay(stream, at: seq) == memory.replay(stream, at: seq))
      }
    }
    for stream: StreamName in ["a", "b"] {
      #expect(try disk.log.items(of: stream) == disk.log.replay(stream))
    }
    let report = try disk.log.verify()
    #expect(report.isClean, "\(report.problems)")
    #expect(report.events == head)
  }

  /// A stream of thousands of items on disk: the order tree has several
  /// levels; list, replay --at, verify and a rebuild all agree with a model.
  @Test func aLargeStreamOnDisk() throws {
    let dir = TemporaryDirectory()
    let disk = try DiskLog(dir.db, checkpointInterval: 64)
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
        let id = ItemID.random()
        model.insert(id, at: index)
        requests.append(
          WriteRequest(stream: "big", command: .insert(InsertRequest(index: index, text: "i\(step)", id: id))))
      } else if next(2) == 0 {
        let index = next(model.count)
        requests.append(WriteRequest(stream: "big", command: .remove(.id(model.remove(at: index)))))
      } else {
        let from = next(model.count), to = next(model.count)
        if from == to { continue }
        model.insert(model.remove(at: from), at: to)
        requests.append(WriteRequest(stream: "big", command: .move(from: from, to: to, id: nil)))
      }
    }
    // In batches, as import and append --lines do, with small checkpoints.
    for start in stride(from: 0, to: requests.count, by: 1000) {
      try disk.perform(Array(requests[start..<min(start + 1000, requests.count)]))
    }
    #expect(model.count > 2000)
    let log = disk.log
    let current = try log.items(of: "big")
    #expect(current.items.map(\.id) == model)
    #expect(try log.replay("big") == current)
    #expect(try log.replay("big", at: UInt64(requests.count)) == current)
    #expect(try log.verify().isClean)
    // One more command touches a few nodes, not the whole order.
    try log.move(from: 0, to: model.count - 1, in: "big")
    model.append(model.removeFirst())
    #expect(try log.items(of: "big").items.map(\.id) == model)
    #expect(try log.verify().isClean)
  }

  @Test func theMapGrowsBySelf() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    let big = String(repeating: "x", count: Limits.maxTextBytes)
    for _ in 0..<6 { try log.append(big) }
    // Six 1 MiB messages went into a map that started at 1 MiB.
    let size = try FileManager.default.attributesOfItem(atPath: dir.db + "/data.mdb")[.size] as? Int ?? 0
    #expect(size >= 6 * LMDBTables.initialMapSize)
    #expect(try log.verify().isClean)
    #expect(try log.items().items.count == 6)
  }

  @Test func filesArePrivateToTheOwner() throws {
    let dir = TemporaryDirectory()
    try EventLog(dir.db).append("secret")
    let fm = FileManager.default
    #expect((try fm.attributesOfItem(atPath: dir.db)[.posixPermissions] as? Int) == 0o700)
    for file in ["data.mdb", "lock.mdb"] {
      #expect((try fm.attributesOfItem(atPath: dir.db + "/" + file)[.posixPermissions] as? Int) == 0o600)
    }
  }

  @Test func readersNeverCreateAnything() throws {
    let dir = TemporaryDirectory()
    #expect(throws: MsglogError.self) { try LMDBTables(path: dir.db, create: false) }
    #expect(!FileManager.default.fileExists(atPath: dir.db))
    try FileManager.default.createDirectory(atPath: dir.db, withIntermediateDirectories: false)
    #expect(throws: MsglogError.self) { try LMDBTables(path: dir.db, create: false) }
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.db).isEmpty)
  }

  @Test func refusesWhatIsNotAMsglogDatabase() throws {
    let dir = TemporaryDirectory()
    let file = dir.path + "/file"
    _ = FileManager.default.createFile(atPath: file, contents: Data("hi".utf8))
    for create in [false, true] {
      #expect(throws: MsglogError.self) { try LMDBTables(path: file, create: create) }
    }
    let other = dir.path + "/other"
    try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: false)
    _ = FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("x".utf8))
    #expect(throws: MsglogError.self) { try LMDBTables(path: other, create: true) }
    let garbage = dir.path + "/garbage"
    try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: false)
    _ = FileManager.default.createFile(atPath: garbage + "/data.mdb", contents: Data(repeating: 0x41, count: 16384))
    #expect(throws: MsglogError.self) { try LMDBTables(path: garbage, create: false) }
    // An LMDB environment that msglog did not make.
    let foreign = dir.path + "/foreign"
    try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
    do {
      let env = try Environment(path: foreign, readOnly: false, maxDatabases: 2, mapSize: 1 << 20)
      try env.write { txn in
        let db = try txn.openTable("stuff", create: true)!
        try txn.put(db, Array("k".utf8), Array("v".utf8))
      }
    }
    #expect(throws: MsglogError.self) { try LMDBTables(path: foreign, create: false) }
  }

  /// A byte flipped inside a record on disk: verify names the seq, replay refuses.
  @Test func detectsABitFlippedOnDisk() throws {
    let dir = TemporaryDirectory()
    do {
      let log = try EventLog(dir.db)
      for text in ["alpha", "MARKER-bravo-7q", "charlie"] { try log.append(text) }
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
    let log = try EventLog(dir.db, configuration: .init(access: .readOnly))
    let report = try log.verify()
    #expect(report.problems.first?.hasPrefix("seq 2: corrupted record") == true, "\(report.problems)")
    let error = try #require(throws: MsglogError.self) { try log.replay() }
    guard case .corruptedRecord(seq: 2, _) = error else {
      Issue.record("expected a corrupted record at seq 2, got \(error)")
      return
    }
    #expect(try log.replay(at: 1).items.map(\.text) == ["alpha"])
  }

  /// Reading records at ascending seqs (what `list` does with its items'
  /// seqs) finds what a lookup of each finds: seqs next to each other,
  /// gaps a step or two long (stepped over) and longer (searched), the same
  /// seq twice, and seqs past the head (found nowhere), across many pages.
  @Test func recordsAtAscendingSeqsAreTheRecordsAtEachSeq() throws {
    let dir = TemporaryDirectory()
    let disk = try DiskLog(dir.db)
    let requests = BulkImportCatalogue.workload(count: 3_000, streams: ["doc", "other"], seed: 7)
    try disk.perform(requests)
    let head = try disk.log.headSeq()
    #expect(head > 2_000)
    try disk.log.read { snapshot in
      let reader = snapshot.storeReader
      var each: [UInt64: [UInt8]] = [:]
      try reader.forEachRecord(at: Array(1...head)) { seq, bytes in each[seq] = Array(bytes) }
      #expect(each.count == Int(head))
      for gaps in [[1], [2], [3, 1], [8], [9], [1, 7, 2, 30], [13, 0, 1], [200, 1, 1]] {
        var seqs: [UInt64] = []
        var seq: UInt64 = 1
        var k = 0
        while seq <= head + 20 {
          seqs.append(seq)
          seq += UInt64(gaps[k % gaps.count])
          k += 1
        }
        var found: [Int: [UInt8]] = [:]
        try seqs.withUnsafeBufferPointer { ascending in
          try reader.forEachRecord(ascending: ascending) { place, bytes in
            #expect(found[place] == nil, "place \(place) twice")
            found[place] = Array(bytes)
          }
        }
        for (place, seq) in seqs.enumerated() {
          #expect(found[place] == each[seq], "seq \(seq) with gaps \(gaps)")
        }
      }
    }
  }
}
