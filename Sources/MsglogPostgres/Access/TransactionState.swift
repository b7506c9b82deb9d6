extension PostgresStore {
  /// Where a transaction is between its opening and its commit: what it
  /// was opened on, what has been sent, and so what must go in front of
  /// its next statements (its `BEGIN`, the head row's lock).
  ///
  /// Every write commits under the head row's lock, taken in front of its
  /// first writes (or when it opens); `basis` decides how that lock checks
  /// that the state the write validated against is still the log's.
  struct TransactionState {
    /// What the transaction was opened on.
    enum Basis {
      /// A read-only snapshot: it takes no lock.
      case reading
      /// A write that locked the head row when it opened (after one that
      /// lost its optimism, or the first write, which creates the schema).
      case locked
      /// A write on a repeatable-read snapshot: the lock fails (could not
      /// serialize) if another writer committed after it.
      case snapshot
      /// A write on what this process knew (`KnownState`): nothing is sent
      /// before its first statement, and the lock checks that the head row
      /// is still at this seq and version (its xmin). Where the write that
      /// left it is still committing, the lock goes in front of the first
      /// read too: it waits for that commit, so the read sees its rows.
      case known(seq: UInt64, version: String, KnownState.Standing)
    }

    enum Phase: Comparable {
      /// Nothing sent yet: the `BEGIN` goes with the first statement.
      case unsent
      /// Begun, the head row not locked: the lock goes in front of the first writes.
      case begun
      /// The head row locked, nothing written yet.
      case locked
      /// Writes sent, under the lock.
      case wrote
      /// Everything answered but the `COMMIT`, which the server is flushing.
      case committing
      /// Committed (or, having sent nothing, ended).
      case committed
    }

    let basis: Basis
    /// Whether this transaction creates the schema (the first write): no
    /// one else sees its tables until it commits.
    let createsSchema: Bool
    private(set) var phase: Phase
    /// The head seq: read (and perhaps locked) at the opening, then moved
    /// by appends; nil in a read until it asks.
    var head: UInt64?
    /// The head when the transaction opened: a commit that leaves it there
    /// appended nothing, and wakes no follower.
    let openingHead: UInt64?
    /// Whether the lock checked what was known (a write on what was known
    /// that sends nothing checks nothing: what it decided may be stale).
    private(set) var checkedKnown = false
    /// The head row's version once committed (or committing): this
    /// transaction's, or the known one when it did not move the head; nil
    /// otherwise.
    private(set) var committedVersion: String? = nil

    private init(basis: Basis, phase: Phase, head: UInt64?, createsSchema: Bool = false) {
      self.basis = basis
      self.createsSchema = createsSchema
      self.phase = phase
      self.head = head
      self.openingHead = head
    }

    static let reading = TransactionState(basis: .reading, phase: .begun, head: nil)

    /// A write whose opening round trip read `head`, locking it or not
    /// (and perhaps creating the schema first).
    static func opened(head: UInt64, locked: Bool, creating: Bool = false) -> TransactionState {
      TransactionState(
        basis: locked ? .locked : .snapshot, phase: locked ? .locked : .begun, head: head, createsSchema: creating)
    }

    /// A write on what was known: the head at `head`, its row at `version`.
    static func knowing(head: UInt64, version: String, _ standing: KnownState.Standing) -> TransactionState {
      TransactionState(basis: .known(seq: head, version: version, standing), phase: .unsent, head: head)
    }

    /// Whether a read must wait for the head row's lock: on what a write
    /// still committing leaves, it would otherwise not see that write.
    private var readsUnderLock: Bool {
      if case .known(_, _, .committing) = basis { return true }
      return false
    }

    var writes: Bool {
      if case .reading = basis { return false }
      return true
    }

    /// Statements to send, with what must go in front of them.
    struct Outgoing {
      var statements: [Statement]
      /// Where the head row's lock is among them, when they take it: the
      /// statement whose failure may mean `HeadMoved`.
      var lockAt: Int?
    }

    /// `statements` with what must be sent before them: the `BEGIN` if it
    /// has not been, and when they write (`locking`), the head row's lock
    /// if it is not held (and in front of a read that must wait for it,
    /// `readsUnderLock`). They are taken as sent: a failure in sending
    /// them ends the transaction (the store rolls it back).
    mutating func sending(_ statements: [Statement], locking: Bool) -> Outgoing {
      var out: [Statement] = []
      var lockAt: Int? = nil
      if phase == .unsent { out.append(PostgresSchema.begin) }
      if locking || readsUnderLock {
        precondition(writes, "a write in a read transaction")
        if phase < .locked {
          lockAt = out.count
          switch basis {
          case .snapshot: out.append(PostgresSchema.lockHead)
          case .known(let seq, let version, _):
            out.append(PostgresSchema.lockHead(ifAt: seq, version: version))
            checkedKnown = true
          case .reading, .locked: preconditionFailure("a transaction opened locked is locked")
          }
        }
        phase = locking ? .wrote : max(phase, .locked)
      } else if phase == .unsent {
        phase = .begun
      }
      return Outgoing(statements: out.isEmpty ? statements : out + statements, lockAt: lockAt)
    }

    /// Whether `error`, raised by this transaction's lock of the head row,
    /// means that another writer committed after the state the write
    /// validated against. On a snapshot the server says so itself (could
    /// not serialize: the row changed after the snapshot); on what was
    /// known, the check divides by zero (plain SQL cannot raise an error
    /// of its own; see `PostgresSchema.lockHead(ifAt:version:)`) — or,
    /// where the database's default isolation is above read committed,
    /// the lock it waited for ends in the server's could-not-serialize.
    func headMoved(_ error: PostgresError) -> Bool {
      switch basis {
      case .snapshot: return error.sqlState == PostgresError.serializationFailure
      case .known:
        return error.sqlState == PostgresError.divisionByZero || error.sqlState == PostgresError.serializationFailure
      case .reading, .locked: return false
      }
    }

    /// Everything but the `COMMIT` is answered; `version` is the head
    /// row's when the commit moves it.
    mutating func committing(version: String?) {
      phase = .committing
      if let version {
        committedVersion = version
      } else if case .known(_, let known, _) = basis {
        committedVersion = known
      }
    }

    /// The transaction committed; `version` is the head row's when the
    /// commit moved it (read when it was committing, if it was told).
    mutating func committed(version: String?) {
      if phase != .committing { committing(version: version) }
      phase = .committed
    }
  }
}
