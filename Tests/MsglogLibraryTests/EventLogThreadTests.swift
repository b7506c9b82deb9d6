import Foundation
import Msglog
import MsglogTestSupport
import Synchronization
import Testing

/// One `EventLog` shared by 8 threads of this process while two other
/// processes write the same database, with messages large enough that the
/// map must grow again and again (in this process and in the others).
@Suite struct EventLogThreadTests {
  @Test func eightThreadsAndTwoProcessesShareOneLog() throws {
    let s = Sandbox()
    let log = try EventLog(s.db)
    try log.append("seed")
    let perThread = ProcessInfo.processInfo.environment["MSGLOG_STRESS"] != nil ? 400 : 80
    let acknowledged = Mutex<[(UInt64, ItemID)]>([])
    let failures = Mutex<[String]>([])
    // Two other processes append large messages meanwhile.
    let big = Data(String(repeating: "p", count: 150_000).utf8)
    let line = { (n: Int) in
      #"{"op":"append","stream":"proc\#(n)","text":"\#(String(repeating: "q", count: 120_000))"}"#
    }
    let others = (0..<2).map { n in
      s.start(["import"], stdin: Data(Array(repeating: line(n), count: 12).joined(separator: "\n").utf8))
    }
    let group = DispatchGroup()
    for n in 0..<2 {
      DispatchQueue.global().async(group: group) {
        for _ in 0..<6 {
          let r = s.run(["append", "--stream", "p\(n)"], stdin: big)
          if r.code != 0 { failures.withLock { $0.append("process append: \(r)") } }
        }
      }
    }
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      let stream = StreamName("t\(thread)")
      var mine: [ItemID] = []
      for step in 0..<perThread {
        do {
          switch step % 8 {
          case 0, 1:
            let outcome = try log.append("thread \(thread) step \(step)", to: stream)
            mine.append(outcome.event.id)
            acknowledged.withLock { $0.append((outcome.event.seq, outcome.event.id)) }
          case 2:
            // Large enough that the map keeps growing under everyone.
            let outcome = try log.append(String(repeating: "t", count: 60_000), to: "shared")
            acknowledged.withLock { $0.append((outcome.event.seq, outcome.event.id)) }
          case 3 where mine.count > 2:
            try log.move(from: 0, to: mine.count - 1, in: stream)
            mine.append(mine.removeFirst())
          case 4 where mine.count > 3:
            try log.remove(id: mine.removeLast(), from: stream)
          case 5:
            let items = try log.items(of: stream).items.map(\.id)
            if items != mine {
              failures.withLock {
                $0.append("thread \(thread): its stream is \(items.count) items, expected \(mine.count)")
              }
            }
          case 6:
            let head = try log.headSeq()
            _ = try log.replay(stream, at: head / 2)
            _ = try log.streams()
          default:
            let head = try log.headSeq()
            _ = try log.events(from: head > 20 ? head - 20 : 1, limit: 20)
          }
        } catch {
          failures.withLock { $0.append("thread \(thread) step \(step): \(error)") }
        }
      }
    }
    group.wait()
    for child in others {
      let r = child.finish()
      if r.code != 0 { failures.withLock { $0.append("import process: \(r)") } }
    }
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
    // Every acknowledged write is in the log, at the seq it was given.
    let events = try log.events()
    #expect(events.map(\.seq) == Array(1...UInt64(events.count)), "seqs are not 1…head")
    for (seq, id) in acknowledged.withLock({ $0 }) {
      #expect(events[Int(seq - 1)].id == id, "seq \(seq)")
    }
    #expect(try log.verify().isClean)
    let size = try FileManager.default.attributesOfItem(atPath: s.db + "/data.mdb")[.size] as? Int ?? 0
    print(
      "eight threads: \(acknowledged.withLock { $0.count }) acknowledged writes, \(events.count) events, data file \(size >> 20) MiB"
    )
  }
}
