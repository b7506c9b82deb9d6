import Foundation
import Synchronization
import Testing

@testable import Msglog

/// The group commit's queue on its own, with a commit that only takes its
/// time: how writers that come back after each commit are batched.
@Suite struct CommitQueueTests {
  /// Writers in a closed loop, as a server's clients: each writes again as
  /// soon as its last write is answered. The first of a batch's writers to
  /// come back finds no one waiting and nothing in flight; taken for a lone
  /// writer, it committed alone (a whole commit for one write) while the
  /// others gathered behind it — every other batch a single write. It now
  /// waits a moment for the rest of its batch.
  @Test func theFirstWriterBackWaitsForTheRestOfItsBatch() throws {
    let queue = CommitQueue<Int, Int>(batchLimit: 64)
    let batches = Batches()
    let writers = 4
    let rounds = 15
    let done = DispatchGroup()
    for writer in 0..<writers {
      done.enter()
      Thread.detachNewThread {
        defer { done.leave() }
        for round in 0..<rounds {
          _ = try? queue.submit(writer * rounds + round) { tickets, _ in batches.commit(tickets) }
        }
      }
    }
    done.wait()
    let sizes = batches.sizes.withLock { $0 }
    #expect(sizes.reduce(0, +) == writers * rounds)
    // Once all four have written, batches of one are a writer that came
    // back early and went alone: a few at most, from threads scheduled
    // late. Without the wait, about every other batch is one.
    let lone = sizes.dropFirst(2).filter { $0 == 1 }.count
    #expect(lone <= 5, "batches: \(sizes)")
    #expect(sizes.count <= rounds + 6, "batches: \(sizes)")
  }

  /// The same through `enqueue`, as `serve` writes: each answer goes to an
  /// event loop, which takes every answer there when it wakes and sends
  /// the next writes (at once, or `delay` µs apart: clients' round trips),
  /// and a batch is built on a spare thread. By the time the first writer
  /// back is gathered there, others of its batch already wait beside it;
  /// counted on top of the last batch, they made it wait for more writers
  /// than there are, every time, until its patience ran out (seen with no
  /// delay). And the writes that come after it must wake it once they all
  /// have (seen with one).
  @Test(arguments: [0, 150]) func theFirstWriterBackThroughAnEventLoopCountsItsBatchOnce(delay: Int) throws {
    let queue = CommitQueue<Int, Int>(batchLimit: 64)
    let batches = Batches()
    let writers = 4
    let rounds = 15
    let done = DispatchGroup()
    let loop = DispatchQueue(label: "event loop")
    /// Answers the loop has yet to act on, taken all at once as an event
    /// loop takes every socket ready when it wakes.
    let answered = Mutex<[(writer: Int, round: Int)]>([])
    @Sendable func next(_ writer: Int, _ round: Int) {
      round + 1 < rounds ? write(writer, round + 1) : done.leave()
    }
    @Sendable func drain() {
      let taken = answered.withLock { answered -> [(writer: Int, round: Int)] in
        let taken = answered
        answered = []
        return taken
      }
      for (writer, round) in taken {
        // One after another, so that the last come after the gathering
        // thread has gone to sleep, whenever it gets going.
        if delay > 0 { usleep(UInt32(delay)) }
        next(writer, round)
      }
    }
    @Sendable func write(_ writer: Int, _ round: Int) {
      queue.enqueue(
        writer * rounds + round, commit: { tickets, _ in batches.commit(tickets) }, buildingHere: false
      ) { _ in
        let first = answered.withLock { answered in
          answered.append((writer, round))
          return answered.count == 1
        }
        if first { loop.async { drain() } }
      }
    }
    for writer in 0..<writers {
      done.enter()
      loop.async { write(writer, 0) }
    }
    done.wait()
    let sizes = batches.sizes.withLock { $0 }
    #expect(sizes.reduce(0, +) == writers * rounds)
    // A gathering that waits out its patience, or a batch short of the
    // writers, is a thread scheduled late: none or one on a quiet machine,
    // up to four while another test run loaded both cores. Counting the
    // batch twice, 10-14 of 15 waited out (no delay); not woken by the
    // writers that came, 14-16 (the delay); never waiting for them, nearly
    // every batch was short.
    let fewEnough = 6
    #expect(queue.waitedOut <= fewEnough, "\(queue.waitedOut) of \(sizes.count) waited out their patience: \(sizes)")
    // After the first two batches (one write, then the rest that came
    // during its commit), whole ones.
    #expect(sizes.dropFirst(2).filter { $0 < writers }.count <= fewEnough, "batches: \(sizes)")
  }

  /// A commit that only takes its time, noting each batch's size.
  final class Batches: Sendable {
    let sizes = Mutex<[Int]>([])

    func commit(_ tickets: [CommitQueue<Int, Int>.Ticket]) {
      // Long enough that the writers answered come back well within the
      // patience it earns (half of it, at most 2 ms), on a loaded machine too.
      Thread.sleep(forTimeInterval: 0.008)
      sizes.withLock { $0.append(tickets.count) }
      for ticket in tickets { ticket.result = .success(ticket.work) }
    }
  }
}
