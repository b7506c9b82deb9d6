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
    // The hung read ends (1); the next caller may find it just ending, so
    // it is asked until a read of its own answers: it was given the last.
    var answered: Int? = nil
    for _ in 0..<100 where answered == nil || answered == 1 {
      if case .answered(let value) = probe.read() { answered = value }
    }
    #expect(answered == 2)
    #expect(reads.read { $0 } == 2)
  }
}
