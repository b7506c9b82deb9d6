import Msglog

/// A write command committed, and then its report could not be written
/// (a full disk behind `> file`). It exits 1, as any failed write to
/// stdout does; the words (`Wording`) name what was made, so that a script
/// retrying on exit 1 can see that retrying would make it again.
struct ReportLost: Error {
  /// The outcomes of what was made, in order.
  let made: [Outcome]
  let errno: Int32
}
