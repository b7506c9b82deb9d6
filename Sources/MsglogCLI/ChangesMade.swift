import Msglog

/// What a write command committed before printing its report. When the
/// report cannot be written (a full disk behind `> file`), the command
/// still exits 1, as any failed write to stdout does, and the hint names
/// what was made, so that a script retrying on exit 1 can see that
/// retrying would make it twice.
final class ChangesMade {
  private(set) var last: Outcome?

  func note(_ outcome: Outcome?) {
    if let outcome { last = outcome }
  }

  /// The hint for a report that was lost; nil when nothing was made.
  var hintForLostReport: String? {
    guard let last else { return nil }
    if let change = last.pending {
      return "the change was made (pending change \(change)); only its report was lost: 'msglog status' shows it"
    }
    let seq = last.event.seq
    return "the change was made (seq \(seq)); only its report was lost: 'msglog log --from \(seq)' shows it"
  }
}
