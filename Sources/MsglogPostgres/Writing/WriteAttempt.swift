extension PostgresStore {
  /// One try at a write transaction: how it opens, and so how its commit
  /// makes sure that the state the write validated against is still the
  /// log's. A write tries one after another until one commits
  /// (`write(reserving:touching:_:)`); each that does not leaves nothing
  /// written and names the next:
  ///
  ///     onKnown ──(head moved, or decided on what was known)──▶ opening(l)
  ///     opening(.atCommit) ──(head moved)──▶ opening(.atOpening)
  ///     opening(_) ──(no schema yet)──▶ creatingSchema
  ///     creatingSchema ──(another first writer made it)──▶ opening(.atOpening)
  ///
  /// where `l` is `.atOpening` while this process has lately met another's
  /// commit (`NextWrite.contended`), `.atCommit` otherwise.
  /// A locked transaction cannot find the head moved, and a transaction
  /// that creates the schema is the only one that can lose that race, so
  /// the graph has no other edges: each runner names its successors.
  enum WriteAttempt {
    /// On what this process's last write left known (`KnownState`):
    /// nothing is sent before the commit, whose pipeline opens with the
    /// check that the head row is still as that write left it.
    case onKnown(KnownState)
    /// With an opening round trip that reads the head, the server's clock
    /// and the touched streams, locking the head row then or at the commit.
    case opening(HeadLocking)
    /// No schema yet: the opening round trip creates it, and locks.
    case creatingSchema
  }

  /// When a write that opens with a round trip locks the head row.
  enum HeadLocking {
    /// With its commit, on a repeatable-read snapshot (optimistic): no
    /// lock is held while the write validates, and another writer's
    /// commit since makes the lock fail before anything is written.
    case atCommit
    /// In its opening round trip: for a second after a write that lost
    /// its optimism (writers elsewhere are busy), and for its rerun.
    case atOpening
  }

  /// How an attempt ended.
  enum AttemptEnd<R> {
    /// Committed, with what the write's body returned.
    case committed(R)
    /// Nothing was written (its transaction is rolled back); the next try.
    case again(WriteAttempt)
  }
}
