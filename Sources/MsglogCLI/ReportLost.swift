import Msglog

/// A write command committed, and then its report could not be written
/// (a full disk behind `> file`). It exits 1, as any failed write to
/// stdout does; the words (`Wording`) name what was made, so that a script
/// retrying on exit 1 can see that retrying would make it again.
struct ReportLost: Error {
  /// What a write command made, as much as its hint needs.
  enum Made {
    /// Changes by `append`, `insert`, `move`, …: their outcomes, in order.
    case changes([Outcome])
    /// An import of at least one event.
    case imported(ImportResult)
    /// An erase's event, and whether a purge followed it (`--also-purge`).
    case erased(seq: UInt64, purged: Bool)
    /// A trim: where history now begins.
    case trimmed(horizon: UInt64)
    /// A purge, and the bytes it scrubbed.
    case purged(bytes: UInt64)
  }

  let made: Made
  let errno: Int32
}

extension Invocation {
  /// Prints the report of what `made` made, and writes it out at once: a
  /// report that cannot be written says what was made (`ReportLost`).
  /// `made` is nil when the command made nothing (a move onto itself, a
  /// dry run): its lost report is a plain write error.
  func reporting(_ made: ReportLost.Made?, _ report: () throws -> Void) throws {
    do {
      try report()
      try stdout.flush()
    } catch OutputError.failed(let errno) where made != nil {
      throw ReportLost(made: made!, errno: errno)
    }
  }
}

/// `token add` made a token and could not show its secret, which is
/// shown once and stored nowhere: nobody can use the token. It was
/// revoked again (`revoked`), so that its name is free for a second try;
/// if even that failed, the words say how.
struct SecretNotShown: Error {
  let name: String
  let id: String
  let errno: Int32
  let revoked: Bool
}
