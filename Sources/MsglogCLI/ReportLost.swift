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
