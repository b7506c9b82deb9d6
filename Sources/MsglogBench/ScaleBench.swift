import Foundation
import Msglog

/// A generated log of many events across 10 streams: one ("big") grows to
/// a large number of live items through inserts, random moves and removes;
/// nine small ones (about 10 items each) have their events spread through
/// the whole log.
struct ScaleBench {
  var events: Int
  var bigItems: Int
  var directory: String
  var msglog: String
  var runs: Int

  struct Results {
    var importTime: Duration
    var replayAtSmall: [(Int, Duration)]
    var replayAtBigHead: ProcessRun
    var listBig: ProcessRun
    var listSmall: ProcessRun
    var fullReplayBig: ProcessRun
    var commands: [(String, Duration, Duration)]
  }

  func run() throws -> Results {
    try? FileManager.default.removeItem(atPath: directory)
    let store = try EventLog(directory, configuration: .init(clock: { Timestamp(milliseconds: 1_796_000_000_000) }))
    var rng = SystemRandomNumberGenerator()
    // Big stream: enough inserts to end at `bigItems` live, a few removes, the rest moves.
    let smallShare = events / 10
    let bigEvents = events - smallShare
    let removes = bigItems / 5
    let inserts = bigItems + removes
    let moves = max(0, bigEvents - inserts - removes)
    var bigOrder: [ItemID] = []  // only to name removed items; a plain array is fine here
    bigOrder.reserveCapacity(inserts)
    var smallCounts = [Int](repeating: 0, count: 9)
    var smallIDs = [[ItemID]](repeating: [], count: 9)
    // i: insert into big, m: move in big, r: remove from big, s: an event of a small stream.
    var plan: [UInt8] =
      Array(repeating: UInt8(ascii: "i"), count: inserts)
      + Array(repeating: UInt8(ascii: "m"), count: moves) + Array(repeating: UInt8(ascii: "r"), count: removes)
      + Array(repeating: UInt8(ascii: "s"), count: smallShare)
    plan.shuffle(using: &rng)
    let start = ContinuousClock.now
    var done = 0
    let batch = 100_000
    var n: UInt64 = 0
    while done < plan.count {
      let end = min(done + batch, plan.count)
      var requests: [WriteRequest] = []
      requests.reserveCapacity(end - done)
      do {
        for k in done..<end {
          var request: WriteRequest
          switch plan[k] {
          case UInt8(ascii: "m") where bigOrder.count > 1, UInt8(ascii: "r") where bigOrder.count > 1:
            if plan[k] == UInt8(ascii: "m") {
              let from = Int.random(in: 0..<bigOrder.count, using: &rng)
              var to = Int.random(in: 0..<bigOrder.count, using: &rng)
              if to == from { to = (from + 1) % bigOrder.count }
              request = WriteRequest(stream: "big", command: .move(from: from, to: to, id: nil))
              // The array model is only kept for removes; a move does not change membership.
            } else {
              let i = Int.random(in: 0..<bigOrder.count, using: &rng)
              let id = bigOrder[i]
              bigOrder.swapAt(i, bigOrder.count - 1)
              bigOrder.removeLast()
              request = WriteRequest(stream: "big", command: .remove(.id(id)))
            }
          case UInt8(ascii: "s"):
            let s = Int.random(in: 0..<9, using: &rng)
            let name = StreamName("small-\(s)")
            if smallCounts[s] >= 12 || (smallCounts[s] > 6 && Int.random(in: 0..<3, using: &rng) == 0) {
              let id = smallIDs[s].remove(at: Int.random(in: 0..<smallIDs[s].count, using: &rng))
              smallCounts[s] -= 1
              request = WriteRequest(stream: name, command: .remove(.id(id)))
            } else {
              n += 1
              let id = ItemID.random()
              smallIDs[s].append(id)
              smallCounts[s] += 1
              request = WriteRequest(stream: name, command: .insert(InsertRequest(text: "small message \(n)", id: id)))
            }
          default:
            n += 1
            let id = ItemID.random()
            let index = Int(UInt64.random(in: 0...UInt64(bigOrder.count), using: &rng))
            bigOrder.append(id)
            request = WriteRequest(
              stream: "big", command: .insert(InsertRequest(index: index, text: "message \(n)", sender: "gen", id: id)))
          }
          requests.append(request)
        }
      }
      _ = try store.perform(requests)
      done = end
      if done % 1_000_000 == 0 || done == plan.count {
        FileHandle.standardError.write(Data("bench: scale log: \(done)/\(plan.count) events\n".utf8))
      }
    }
    let importTime = ContinuousClock.now - start
    let head = try store.headSeq()

    let db = ["--db", directory]
    var replayAtSmall: [(Int, Duration)] = []
    for percent in [10, 50, 90, 100] {
      let seq = String(head * UInt64(percent) / 100)
      let r = try bestProcess(runs, msglog, db + ["--stream", "small-0", "replay", "--at", seq])
      replayAtSmall.append((percent, r.time))
    }
    let replayAtBigHead = try bestProcess(runs, msglog, db + ["--stream", "big", "replay", "--at", String(head)])
    let listBig = try bestProcess(runs, msglog, db + ["--stream", "big", "list"], memory: true)
    let listSmall = try bestProcess(runs, msglog, db + ["--stream", "small-0", "list"], memory: true)
    let fullReplayBig = try bestProcess(1, msglog, db + ["--stream", "big", "replay"], memory: true)

    // Single durable commands as whole processes: the big stream vs a small one.
    var commands: [(String, Duration, Duration)] = []
    for (label, big, small) in [
      ("append", ["append", "one more"], ["append", "one more"]),
      ("move", ["move", "1", String(bigItems / 2)], ["move", "1", "3"]),
    ] {
      let b = try bestProcess(runs, msglog, db + ["--stream", "big"] + big)
      let s = try bestProcess(runs, msglog, db + ["--stream", "small-1"] + small)
      commands.append((label, b.time, s.time))
    }
    // remove: a different item each run, by full id, taken from the middle.
    var removeBig = Duration.seconds(1_000_000), removeSmall = Duration.seconds(1_000_000)
    for _ in 0..<runs {
      for (stream, isBig) in [(StreamName("big"), true), (StreamName("small-1"), false)] {
        let middle = try store.read { snapshot -> ItemID in
          let reader = snapshot.storeReader
          let head = try reader.streamHead(stream)!
          return try StoredOrder.tree(StoredNodes(reader: reader, stream: stream), head: head)
            .element(at: Int(head.count / 2)).id
        }
        let r = try runProcess(msglog, db + ["--stream", stream.text, "remove", middle.text])
        guard r.status == 0 else { throw BenchError("remove failed") }
        if isBig { removeBig = min(removeBig, r.time) } else { removeSmall = min(removeSmall, r.time) }
      }
    }
    commands.append(("remove", removeBig, removeSmall))
    return Results(
      importTime: importTime, replayAtSmall: replayAtSmall, replayAtBigHead: replayAtBigHead, listBig: listBig,
      listSmall: listSmall, fullReplayBig: fullReplayBig, commands: commands)
  }
}
