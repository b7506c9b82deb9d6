import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// Named tokens (SPEC "Who may do what: named tokens"): made, listed and
/// revoked by whoever can open the database, and looked up by `serve`
/// for each request, so that a revocation needs no restart.
extension EventLog {
  /// A token just made: its row, and the token itself, which is shown
  /// this once and kept nowhere.
  public struct AddedToken: Sendable {
    public let token: NamedToken
    public let secret: TokenSecret
  }

  /// Makes a token named `name` with `scopes`, expiring `lifetime` from
  /// now (never: nil).
  ///
  /// The log's first token is waited out: this returns once every `serve`
  /// of the log wants a token, `tokenlessAnswerLifetime` after the first
  /// token's commit (a request without a token is let in on a "no tokens"
  /// answer that recent; a `serve` asks again for one that presents a
  /// token) — whichever token this adds, the first or one added just after.
  ///
  /// - Throws: `MsglogError.namedToken` for a malformed name, a name a
  ///   live token has, or a replica (tokens are its remote's).
  ///
  /// `show` is given the token once it is committed and before that wait:
  /// a process stopped during the wait (SIGTERM, a hang-up, kill -9) has
  /// shown the secret of the token it made, which otherwise would exist
  /// with its secret lost and its name taken. What `show` throws is
  /// thrown, the wait skipped.
  public func addToken(
    named name: String, scopes: TokenScopes, lifetime: TokenLifetime? = nil,
    showing show: (AddedToken) throws -> Void = { _ in }
  ) throws -> AddedToken {
    try NamedToken.validate(name: name)
    let secret = TokenSecret.random()
    // When the log's first token was made; nil while it has none.
    var firstMade: Timestamp? = nil
    let added = try writingTokens { tokens, now in
      var taken = false
      firstMade = nil
      try tokens.forEachToken { token in
        firstMade = min(firstMade ?? token.made, token.made)
        taken = token.name == name && token.standing(at: now) == .live
        return !taken
      }
      guard !taken else { throw MsglogError.namedToken(.nameTaken(name)) }
      // 64 random bits: a clash is a broken generator, not bad luck.
      guard try tokens.token(id: secret.id) == nil else { throw MsglogError.namedToken(.nameTaken(name)) }
      let token = NamedToken(
        id: secret.id, name: name, scopes: scopes, made: now,
        expires: lifetime.map { Timestamp(milliseconds: now.milliseconds + $0.milliseconds) }, revoked: nil,
        lastUsed: nil, digest: secret.digest)
      try tokens.putToken(token)
      return AddedToken(token: token, secret: secret)
    }
    try show(added)
    waitOutTokenlessAnswers(firstTokenMade: firstMade)
    return added
  }

  /// Returns once no `serve` of the log can let a request without a token
  /// in on a "no tokens" answer from before its first token: the first
  /// token's commit (just now, or when it was made, by the real clock: a
  /// log whose first token is older waits for nothing) plus
  /// `tokenlessAnswerLifetime` and `tokenCommitMargin`. (A `serve` on a
  /// PostgreSQL standby reads the token as late as the standby lags.)
  private func waitOutTokenlessAnswers(firstTokenMade: Timestamp?) {
    let wait = Int64(Self.tokenlessAnswerLifetime / 1_000_000) + Self.tokenCommitMargin
    var remaining = wait
    if let made = firstTokenMade {
      remaining = made.milliseconds + wait - Timestamp.now().milliseconds
      guard remaining > 0, remaining <= wait else { return }
    }
    usleep(UInt32(remaining) * 1_000)
  }

  /// Milliseconds for a token's commit after its `made` time, and for a
  /// `serve`'s clock read before the ask its "no tokens" answer comes from.
  static let tokenCommitMargin: Int64 = 50

  /// How long, in nanoseconds, `serve` lets requests without a token in
  /// on its last "the log holds no named token" answer, before it asks the
  /// log again: on PostgreSQL each ask is a round trip, which every
  /// tokenless request paid (a third of `serve`'s appends a second with
  /// one client). `addToken` waits it out for the log's first token.
  package static let tokenlessAnswerLifetime: UInt64 = 250_000_000

  /// Every token the log keeps, revoked and expired ones too, oldest first.
  public func tokens() throws -> [NamedToken] {
    try readingTokens { tokens in
      var all: [NamedToken] = []
      try tokens.forEachToken { token in
        all.append(token)
        return true
      }
      return all.sorted { ($0.made, $0.id) < ($1.made, $1.id) }
    }
  }

  /// Revokes, for good, the token with the id `nameOrID`, else the live
  /// token so named; returns it as it is now.
  ///
  /// - Throws: `MsglogError.namedToken(.noSuchToken)` when none is, and
  ///   `.alreadyRevoked` for one revoked before.
  public func revokeToken(_ nameOrID: String) throws -> NamedToken {
    try writingTokens { tokens, now in
      var found = NamedToken.isID(nameOrID) ? try tokens.token(id: nameOrID) : nil
      if found == nil {
        try tokens.forEachToken { token in
          if token.name == nameOrID, token.standing(at: now) == .live { found = token }
          return found == nil
        }
      }
      guard var token = found else { throw MsglogError.namedToken(.noSuchToken(nameOrID)) }
      guard token.revoked == nil else { throw MsglogError.namedToken(.alreadyRevoked(name: token.name, id: token.id)) }
      token.revoked = now
      try tokens.putToken(token)
      return token
    }
  }

  /// Whether the log keeps any token, revoked and expired ones included:
  /// from then on `serve` asks every request for one. False for a log
  /// whose database is not made yet, and for a replica.
  public func holdsTokens() throws -> Bool {
    do {
      return try readingTokens { tokens in
        var any = false
        try tokens.forEachToken { _ in
          any = true
          return false
        }
        return any
      }
    } catch MsglogError.noDatabase {
      return false
    } catch MsglogError.namedToken(.inReplica) {
      return false
    }
  }

  /// The token `presented` is, when it is one of the log's and its secret
  /// is right (compared in constant time); nil otherwise. Whether it is
  /// live is the caller's to ask (`NamedToken.standing(at:)`). Read from
  /// the store each time: a revocation by another process, or another
  /// server of a PostgreSQL log, counts at once.
  public func namedToken(presented: some StringProtocol) throws -> NamedToken? {
    guard let secret = TokenSecret(presented: presented) else { return nil }
    let stored: NamedToken?
    do {
      stored = try readingTokens { tokens in try tokens.token(id: secret.id) }
    } catch MsglogError.noDatabase {
      return nil
    }
    guard let stored, stored.digest.matches(secret.digest) else { return nil }
    return stored
  }

  /// Records that the token `id` was let in at `time`, unless it was
  /// within `granularity` before: `token list`'s "last used", kept coarse
  /// so that a busy token costs a write only now and then. Read and
  /// written in one transaction: a revocation meanwhile is kept.
  package func noteUse(ofToken id: String, at time: Timestamp, granularity: Int64 = 300_000) throws {
    try writingTokens { tokens, _ in
      guard var token = try tokens.token(id: id) else { return }
      if let last = token.lastUsed, time.milliseconds - last.milliseconds < granularity { return }
      token.lastUsed = time
      try tokens.putToken(token)
    }
  }

  /// The token with this id as the log has it now; nil when there is none.
  package func namedToken(id: String) throws -> NamedToken? {
    try readingTokens { tokens in try tokens.token(id: id) }
  }

  // MARK: - Transactions

  private func readingTokens<R>(_ body: (any TokenTableReader) throws -> R) throws -> R {
    do {
      return try store.read { reader in
        if try replicaState(in: reader) != nil { throw MsglogError.namedToken(.inReplica(location: location)) }
        guard let tokens = reader as? any TokenTableReader else {
          throw MsglogError.namedToken(.notKept(location: location))
        }
        return try body(tokens)
      }
    } catch {
      throw MsglogError(storeFailure: error) ?? error
    }
  }

  private func writingTokens<R>(_ body: (any TokenTableWriter, Timestamp) throws -> R) throws -> R {
    try writing { writer in
      if try replicaState(in: writer) != nil { throw MsglogError.namedToken(.inReplica(location: location)) }
      guard let tokens = writer as? any TokenTableWriter else {
        throw MsglogError.namedToken(.notKept(location: location))
      }
      return try body(tokens, writer.commitTime ?? configuration.clock())
    }
  }
}
