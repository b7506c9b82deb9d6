import Foundation
import Msglog

/// Import, replay and baselines for one editing trace.
struct TraceBench {
  var trace: Trace
  var directory: String
  var runs: Int

  struct Results {
    var importTime: Duration
    var replay: Duration
    var replayMid: Duration
    var arrayBaseline: Duration
    var rawScan: Duration
  }

  func run() throws -> Results {
    // Import: one write transaction through the front door, as `msglog import` does.
    try? FileManager.default.removeItem(atPath: directory)
    let store = try EventLog(directory, configuration: .init(clock: { Timestamp(milliseconds: 0) }))
    let importTime = try best(of: 1) { consume(try store.perform(trace.requests).count) }
    let head = try store.headSeq()

    // Correctness first: the replayed document is the trace's end content.
    let final = try store.replay("doc")
    guard final.items.map(\.text).joined() == trace.endContent else {
      throw BenchError("\(trace.name): replay does not give the end content")
    }

    let replay = try best(of: runs) { consume(try store.replay("doc").items.count) }
    let replayMid = try best(of: runs) { consume(try store.replay("doc", at: head / 2).items.count) }
    let rawScan = try best(of: runs) {
      try store.read { snapshot in
        let reader = snapshot.storeReader
        var bytes = 0
        try reader.forEachRecord(from: 1) { _, record in
          bytes &+= record.count &+ Int(record[record.count - 1])
          return true
        }
        consume(bytes)
      }
    }
    let arrayBaseline = best(of: 1) { consume(ArrayBaseline.apply(trace.requests)) }
    try phases(store)
    return Results(
      importTime: importTime, replay: replay, replayMid: replayMid, arrayBaseline: arrayBaseline, rawScan: rawScan)
  }
}

extension TraceBench {
  /// Where a full replay's time goes, on stderr: scanning and checksumming
  /// the records, folding positions into the projection, reading the texts.
  func phases(_ log: EventLog) throws {
    /// Runs `body` on the store's own reader, below the front door.
    func read<R>(_ body: (any LogReader) throws -> R) throws -> R { try log.read { try body($0.storeReader) } }
    let name = Array("doc".utf8)
    var events: [PositionalEvent] = []
    let scan = try best(of: runs) {
      events.removeAll(keepingCapacity: true)
      try read { reader in
        try name.withUnsafeBytes { name in
          try reader.forEachRecord(from: 1) { _, bytes in
            if let e = try EventRecord.positional(bytes, ifStream: name) { events.append(e) }
            return true
          }
        }
      }
    }
    var projection = Projection()
    let fold = try best(of: runs) {
      projection = Projection()
      for e in events { try projection.apply(e) }
    }
    let crc = try best(of: runs) {
      try read { reader in
        var x: UInt32 = 0
        try reader.forEachRecord(from: 1) { _, bytes in
          x ^= CRC32C.checksum(bytes)
          return true
        }
        consume(Int(x))
      }
    }
    let decode = try best(of: runs) {
      try read { reader in
        var n = 0
        try reader.forEachRecord(from: 1) { _, bytes in
          n &+= try EventRecord.decode(bytes, verifyingChecksum: false).version == 0 ? 1 : 2
          return true
        }
        consume(n)
      }
    }
    FileHandle.standardError.write(Data("bench: full decode of every record \(decode.pretty)\n".utf8))
    let combined = try best(of: runs) {
      try read { reader in
        var evs: [PositionalEvent] = []
        try name.withUnsafeBytes { name in
          try reader.forEachRecord(from: 1) { _, bytes in
            if let e = try EventRecord.positional(bytes, ifStream: name) { evs.append(e) }
            return true
          }
        }
        var p = Projection()
        for e in evs { try p.apply(e) }
        consume(try Replay.items(p.slots, in: reader).count)
      }
    }
    FileHandle.standardError.write(Data("bench: collect, fold, read items in one go \(combined.pretty)\n".utf8))
    let list = projection.slots
    let texts = try best(of: runs) {
      consume(try read { try Replay.items(list, in: $0) }.count)
    }
    FileHandle.standardError.write(
      Data(
        "bench: \(trace.name) phases: scan+checksum+positional decode \(scan.pretty) (checksum alone \(crc.pretty)), fold into projection \(fold.pretty), read live items \(texts.pretty)\n"
          .utf8))
  }
}

/// What a collection-view data source does: a Swift Array of 16-byte items
/// (the ids; the trace README's reference figure), ids found by linear search.
enum ArrayBaseline {
  static func apply(_ requests: [WriteRequest]) -> Int {
    var items: [ItemID] = []
    for request in requests {
      switch request.command {
      case .insert(let insert):
        items.insert(insert.id!, at: insert.index ?? items.count)
      case .remove(.id(let id)):
        items.remove(at: items.firstIndex(of: id)!)
      case .move(let from, let to, _):
        items.insert(items.remove(at: from), at: to)
      case .remove(.prefix), .edit, .restore, .undo, .erase, .unsign:
        fatalError("traces insert, remove by full id and move")
      }
    }
    return items.count
  }
}
