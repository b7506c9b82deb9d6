import Msglog
import Testing

@testable import MsglogServer

/// The bounded read behind `/readyz` and `/metrics`: a hung store costs a
/// caller the patience and holds one thread, however many callers come.
@Suite struct PatientReadTests {
  @Test func aHungReadIsUnansweredAndSharedThenAnswersWithWhatItFound() {
    let gate = Guarded(false)
    let reads = Guarded(0)
    let probe = PatientRead<Int>(patience: 0.05) { last in
      reads.update { $0 += 1 }
      gate.wait(until: { $0 }) { _, _ in }
      return (last ?? 0) + 1
    }
    guard case .unanswered(last: nil) = probe.read() else { Issue.record("a hung read answered"); return }
    // Three more callers while it hangs: they wait for the same read.
    for _ in 0..<3 {
      guard case .unanswered(last: nil) = probe.read() else { Issue.record("a hung read answered"); return }
    }
    #expect(reads.read { $0 } == 1)
    gate.update { $0 = true }
    // The hung read ends (1); a caller after it starts a read of its own,
    // given the last read's value. Under load a read may outlast the
    // patience and end just after, so the callers go on until a read past
    // the first answers: whichever it is, it counted on from the one
    // before (the reads made, one at a time).
    var answered: Int? = nil
    for _ in 0..<1000 where answered == nil || answered == 1 {
      if case .answered(let value) = probe.read() { answered = value }
    }
    #expect((answered ?? 0) >= 2)
    #expect(answered == reads.read { $0 })
  }

  /// Without a thread to read on, the caller is told at once, with the
  /// last value read (a scrape that cannot read the store says what it
  /// knew rather than wait its patience out).
  @Test func noThreadIsSaidAtOnce() {
    // A patience no test would wait out: the answer must not wait for it.
    let probe = PatientRead<Int>(patience: 3600, startingOn: { _ in false }) { last in (last ?? 0) + 1 }
    guard case .noThread(last: nil) = probe.read() else { Issue.record("a read answered without a thread"); return }
  }
}
