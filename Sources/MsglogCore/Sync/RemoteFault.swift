/// What a replica's remote did that the sync protocol does not allow
/// (docs/SYNC.md, "Nothing a peer sends is trusted"): the remote's fault,
/// never the replica's. Nothing it sent is taken in; what is pending stays.
/// (A record well framed and whole that this replica's log cannot take in
/// is `MsglogError.unacceptableRecord`.)
public enum RemoteFault: Error, Equatable, Sendable, CustomStringConvertible {
  /// A pull's page went on past the records a page may hold.
  case pageTooLong(records: Int)
  /// A pull's page went on past the bytes a page may hold (the first record
  /// aside).
  case pageTooLarge(bytes: Int)
  /// A frame claims more bytes than any record of the format can have.
  case recordTooLarge(bytes: Int)
  /// The record after `seq` fails its checksum or does not decode.
  case damagedRecord(after: UInt64, reason: String)
  /// A record is not in the form a msglog writes it (so its bytes would
  /// differ from the remote's own).
  case recordNotCanonical(seq: UInt64)
  /// The page skipped or repeated a seq: `found` where `expected` was due.
  case seqOutOfOrder(expected: UInt64, found: UInt64)
  /// It said its head was `claimed` but sent nothing after `seq`.
  case headNotBorneOut(claimed: UInt64, seq: UInt64)
  /// Its head is behind a record it sent.
  case headBehindRecords(claimed: UInt64, seq: UInt64)
  /// It answered a sync call with a redirect, which sync never follows.
  case redirected(status: Int, location: String?)
  /// It said this replica's change was applied as the event at `seq`, but
  /// that event is not the change (`found` says what it is instead).
  case outcomeNotBorneOut(change: UInt64, seq: UInt64, found: String)
  /// Its answer to a push put the outcome of change `named` where
  /// change `change`'s was due.
  case outcomeOfAnotherChange(change: UInt64, named: UInt64)
  /// A trimmed remote's bases that no log could start from.
  case basesDoNotFit(reason: String)
  /// Its hello put the start of its history past its head.
  case horizonPastHead(horizon: UInt64, head: UInt64)

  public var description: String {
    switch self {
    case .pageTooLong(let records):
      return "its pull answer ran past \(records) records, more than a page may hold"
    case .pageTooLarge(let bytes):
      return "its pull answer ran past \(bytes) bytes, more than a page may hold"
    case .recordTooLarge(let bytes):
      return "it sent a record of \(bytes) bytes, more than any record can have"
    case .damagedRecord(let seq, let reason): return "its record after seq \(seq) is damaged: \(reason)"
    case .recordNotCanonical(let seq): return "its record at seq \(seq) is not in the form a msglog writes"
    case .seqOutOfOrder(let expected, let found):
      return found < expected
        ? "it sent seq \(found) again where seq \(expected) was due"
        : "it skipped from seq \(expected - 1) to seq \(found)"
    case .headNotBorneOut(let claimed, let seq):
      return "it says its head is seq \(claimed) but sent nothing after seq \(seq)"
    case .headBehindRecords(let claimed, let seq):
      return "it says its head is seq \(claimed) but sent seq \(seq)"
    case .redirected(let status, let location):
      return "it answered \(status), a redirect\(location.map { " to \($0)" } ?? ""), which sync does not follow"
    case .outcomeNotBorneOut(let change, let seq, let found):
      return "it says change \(change) of this replica was applied as seq \(seq), but \(found)"
    case .outcomeOfAnotherChange(let change, let named):
      return "its push answer has the outcome of change \(named) where change \(change)'s was due"
    case .basesDoNotFit(let reason): return "its bases do not fit together: \(reason)"
    case .horizonPastHead(let horizon, let head):
      return "it says its history begins at seq \(horizon), past its head (seq \(head))"
    }
  }
}
