#if canImport(Glibc)
  import Glibc
#endif

/// Everything that can go wrong in msglog, as cases a program can switch on.
///
/// The library throws these and only these (the store modules turn their
/// own failures into them at their boundary). `description` says what went
/// wrong in plain words, naming no command or option; a front end (the
/// command line, the HTTP server) adds its own hints and maps `category` to
/// its exit codes or status codes.
public enum MsglogError: Error, Equatable, Sendable, CustomStringConvertible {
  // MARK: Input the caller got wrong

  /// Input no log would take: empty or too long text, a bad name or id.
  case invalidInput(InvalidInput)

  // MARK: Refused against the current state

  /// `expectVersion` did not match: someone else changed the stream.
  case versionConflict(stream: StreamName, expected: UInt64, actual: UInt64)
  /// An insert's index is past the end.
  case insertOutOfRange(stream: StreamName, index: Int, count: Int)
  /// A move's `from` or `to` is past the last item.
  case moveOutOfRange(stream: StreamName, end: MoveEnd, index: Int, count: Int)
  /// A move in a stream that has no items.
  case emptyStream(StreamName)
  /// The id was inserted before (and may have been removed since); an
  /// `insertSeq` of 0 when the insert is in a stream the asker may not
  /// read (`hidingStreams`).
  case idAlreadyUsed(ItemID, insertSeq: UInt64)
  /// The id was inserted before, into another stream (`home`; nil when a
  /// trim dropped the insert): told as `idAlreadyUsed`, without its seq to
  /// a token that may not read `home` (any token, when it is nil).
  case idUsedInAnotherStream(ItemID, insertSeq: UInt64, home: StreamName?)
  /// A move that names its item (an exported line) found another one there.
  case itemMismatch(index: Int, found: ItemID, expected: ItemID)
  /// No item of the stream has the id (nor had: see `itemRemoved`).
  case noSuchItem(ItemID, stream: StreamName)
  /// The item was removed by the event at `removeSeq` (`restore` brings it back).
  case itemRemoved(ItemID, removeSeq: UInt64)
  /// The item was erased: it never comes back, nor takes an edit.
  case itemErased(ItemID, eraseSeq: UInt64)
  /// The id is an item of stream `home`, not of `stream`, where it was looked for.
  case itemInAnotherStream(ItemID, home: StreamName, stream: StreamName)
  /// No live item of the stream has an id starting with `prefix`.
  case noPrefixMatch(prefix: String, stream: StreamName)
  /// No removed item of the stream has an id with this prefix (a restore).
  case noRemovedPrefixMatch(prefix: String, stream: StreamName)
  /// An id prefix matches several live items: the first few of them.
  case ambiguousPrefix(prefix: String, stream: StreamName, matches: [ItemID], more: Bool)
  case seqBeyondHead(seq: UInt64, head: UInt64)
  /// A point in history before the log's horizon: `trim` dropped the
  /// events before seq `horizon` (exit 1, HTTP 410).
  case historyTrimmed(horizon: UInt64)
  /// A restore (or an undo that needs the item gone) found the item live.
  case itemIsLive(ItemID, stream: StreamName)
  /// A rebased command's index is beyond the list at the version it was made at.
  case outOfRangeAtVersion(stream: StreamName, version: UInt64, index: Int, count: Int)
  /// `undo` without a seq found no event whose undoing would change something.
  case nothingToUndo(stream: StreamName)
  /// The event named is undone already, by the standing event `by`.
  case alreadyUndone(seq: UInt64, by: UInt64)
  /// The seq names no event (0, or past the head).
  case noSuchEvent(seq: UInt64, head: UInt64)
  /// The seq names another stream's event.
  case eventInAnotherStream(seq: UInt64, home: StreamName, stream: StreamName)
  /// `eventInAnotherStream` as one who may not read its stream is told it
  /// (`hidingStreams`).
  case eventNotInStream(seq: UInt64, stream: StreamName)
  /// An event that says it undoes `seq` (an imported line) is not what undoing it appends.
  case notAnUndo(seq: UInt64, reason: String)
  /// A replica's pending undo of the event at `seq`, kept across a reset
  /// (`sync --reset`), whose remote holds another event there, or none.
  case undoneEventNotInLog(seq: UInt64)

  // MARK: Damage

  /// A record fails its checksum or does not decode.
  case corruptedRecord(seq: UInt64, reason: String)
  /// The log as a whole is inconsistent: a gap, a key that is no seq, an
  /// event that does not fit the state replay has reached.
  case corruptedLog(String)
  /// An event that does not fit the state replay has reached at its seq.
  case eventDoesNotFit(seq: UInt64, reason: String)
  /// A derived table disagrees with the log; `repair()` rebuilds it.
  case derivedDamage(DerivedDamage)
  /// The derived tables were written by an older msglog; `repair()` rebuilds them.
  case outdatedFormat(String)
  /// `repair()` found the log itself damaged: rebuilding derived tables cannot help.
  case unrepairable(problems: [String])

  // MARK: Where the log lives

  /// Nothing at an LMDB path (`emptyDirectory`: an empty directory), or no
  /// log in a server's database.
  case noDatabase(location: String, store: Store, emptyDirectory: Bool)
  case notAMsglogDatabase(location: String, reason: String)
  /// An LMDB environment (or server database) that belongs to another program.
  case anotherProgramsDatabase(location: String)
  case readOnly(location: String, store: Store, reason: String)
  /// The server refused a privilege the operation needs: `reason` is its
  /// words, `missing` what the role lacks (as the server answered when
  /// asked), or what the operation needs when it could not be asked.
  case permissionDenied(location: String, writing: Bool, reason: String, missing: MissingPrivileges)
  /// Tables the log needs are not in the server's database (a log made by
  /// an older msglog), and this role may not make them: only the owner of
  /// the log's schema does, so that nobody else comes to own a table of it.
  case missingTables(location: String, tables: [String])
  case cannotRead(location: String, reason: String)
  case cannotCreate(location: String, reason: String)
  /// A backup's destination cannot be used.
  case cannotBackUp(location: String, why: BackupRefusal)
  /// A hot backup copies an LMDB database; this log is elsewhere (on
  /// PostgreSQL, whose own tools copy it).
  case backupNotSupported(location: String)
  /// The store could not grow (LMDB's file system) or write (a server).
  case diskFull(store: Store, detail: String)
  /// A read without a lock kept racing commits.
  case changedDuringRead(location: String)
  /// `purge` found old pages still held by another process's read, round
  /// after round: what it could not scrub yet.
  case purgeHeldByReader(location: String)
  /// `purge` on PostgreSQL waited for a snapshot older than itself (named
  /// by `holder`), which may still see erased row versions, and it did not end.
  case purgeHeldByTransaction(location: String, holder: String)
  /// `purge` on PostgreSQL could not take a table's lock to rewrite it
  /// within its wait: a session (`holder`) kept a lock on it. The tables
  /// before it were rewritten.
  case purgeHeldByLock(location: String, table: String, holder: String)
  /// `purge` on PostgreSQL by a role that does not own msglog's tables,
  /// which only their owner may rewrite: nothing was done.
  case purgeNeedsOwner(location: String, owner: String)
  /// `purge` on PostgreSQL scrubbed msglog's tables, but the planner's
  /// statistics of `msglog.events` (an older database's) still hold
  /// sample records, for `reason`.
  case purgeLeftStatistics(location: String, reason: String)
  /// `purge` of a store that has none.
  case purgeNotSupported(location: String)
  /// `trim` of a store that cannot (exit 1, HTTP 409).
  case trimNotSupported(location: String)
  /// `trim` or `purge` in a replica: its history is its remote's (exit 1).
  case forgettingInReplica(location: String, command: String)
  /// The server could not be reached, or refused us (authentication, a missing database).
  case cannotConnect(location: String, reason: String)
  /// The connection broke during an operation (the server stopped or restarted);
  /// nothing of the operation was committed unless it said so.
  case connectionLost(location: String, reason: String)
  /// The server cancelled a read under way: a hot standby does so to a read
  /// that holds up the primary's changes it replays (a recovery conflict).
  /// Nothing was changed; reading again is the answer.
  case readCancelled(location: String, reason: String)
  /// The log was written by a newer msglog, whose format this one does not know.
  case newerFormat(location: String, found: String, known: String)
  /// The store's engine failed, in its own words (the server's message).
  case storeFailure(store: Store, detail: String)
  /// LMDB failed, for the reason it gave.
  case lmdbFailure(LMDBFailure)
  /// The operating system refused what an operation needs (`errno`: its
  /// reason, nil when it gave none).
  case systemRefused(SystemNeed, errno: Int32?)
  /// A log whose store cannot wake a follower (one in memory).
  case cannotFollow(location: String)
  /// The database a follower opened is no longer the one at its path: it
  /// was removed, or another put there (a backup restored by `mv`).
  case followedDatabaseDisplaced(location: String)
  /// A write committed into a database that is no longer the one at its
  /// path (removed, or another put there): it is not acknowledged, since
  /// nobody will open that file again.
  case writtenDatabaseDisplaced(location: String)
  /// The derived tables rebuilt from the log did not verify: its first problem.
  case rebuildDidNotVerify(problem: String)
  /// An error of a type msglog does not know came out of a store: that
  /// type's name and its own words.
  case foreignFailure(type: String, words: String)

  // MARK: Replicas and sync

  /// An undo of a replica's earlier change that appended nothing (it was
  /// refused, or changed nothing): there is no event of it to undo.
  case changeAppendedNothing(change: UInt64)
  /// A replica's change arrived before the ones before it were done.
  case changeOutOfOrder(change: UInt64, done: UInt64)
  /// Sync and status need a replica; this log is not one.
  case notAReplica(location: String)
  /// The replica and the remote are not copies of one log (another log, or
  /// the remote restored from an older copy): nothing was changed.
  case anotherLog(remote: String, reason: String)
  /// The remote and this msglog cannot sync: their versions differ.
  case incompatibleRemote(remote: String, reason: String)
  /// The remote does not hold this replica's changes as the replica does
  /// (a change out of order, or forgotten, there: restored from an older
  /// copy): nothing was pushed.
  case remoteLostTrack(remote: String, reason: String)
  /// Another sync of this replica is running.
  case syncRunning(location: String)
  /// The replica's head moved while a page of its remote was read, which
  /// only another sync could do: nothing of the page was taken in.
  case replicaMovedDuringPull
  /// A pending change that does not apply to the local view now (when the
  /// ledger gave no other reason).
  case changeDoesNotApply(change: UInt64)
  /// A clone cannot be made: the place is taken, or the remote cannot be cloned yet.
  case cannotClone(location: String, reason: String)

  // MARK: Named tokens

  /// A token command refused: a malformed name, pattern or duration
  /// (invalid input), or an unknown token, a replica (refused).
  case namedToken(TokenRefusal)
  /// A push for `replica` without the secret its remote holds the hash of
  /// (`given` false), or with another (`given` true): nothing was done.
  case replicaSecretRefused(replica: ItemID, given: Bool)
  /// A push resent a change the replica had settled since, whose outcome
  /// the remote no longer keeps (it appended nothing): the replica lost track.
  case changeForgotten(change: UInt64, keptFrom: UInt64)
  /// A push sent, under a number the replica's changes had used already,
  /// another change than the one done under it (told by when it was made):
  /// a copy of the replica — one restored from a backup, or copied —
  /// numbering again from where the copy was. `seq` is where the change
  /// done under the number is; nil when it appended nothing (the remote
  /// answered "unchanged" to a change that adds an item).
  case changeNumberReused(change: UInt64, seq: UInt64?)
  /// A remote sent a record this replica cannot take in (text past the
  /// limits, say): the remote's fault, nothing was taken in from it.
  indirect case unacceptableRecord(remote: String, seq: UInt64, reason: MsglogError)
  /// The remote sent what the sync protocol does not allow: its fault, not
  /// the replica's (which took none of it in).
  case remoteFault(remote: String, RemoteFault)
  /// The remote wants a token and got none, or refused the one sent (HTTP
  /// 401): no retry mends it; a new token does.
  case tokenRefused(remote: String, reason: String)
  /// The remote refused this request to the token sent, or to this client
  /// (HTTP 403): its operator decides.
  case remoteForbids(remote: String, reason: String)
  /// The remote refused a replica's push whole for want of a right (a
  /// token that may write no stream, a PostgreSQL role that may not
  /// write, a standby), nothing of it done there. A sync throws it only
  /// once it has pulled what the remote holds — an erase there must reach
  /// the replica — its changes still pending.
  case pushRefused(remote: String, reason: String)
  /// The remote's TLS certificate cannot be trusted (not signed by a
  /// trusted authority, expired, for another name …), or the authorities
  /// given cannot be used.
  case untrustedRemote(remote: String, reason: String)
  /// A sync gave up on a remote too slow to answer: an exchange, or the
  /// whole run, took longer than its bound (`seconds`).
  case syncTimedOut(remote: String, bound: SyncBound, seconds: Double)

  // MARK: Batches

  /// The error of one line of an import.
  indirect case line(Int, MsglogError)
  /// The import's input could not be read.
  case cannotReadInput(String)

  /// Which end of a move is out of range.
  public enum MoveEnd: String, Sendable { case from, to }

  /// What the operating system refused (`systemRefused`).
  public enum SystemNeed: Sendable, Equatable {
    /// Signal handling, for a command that ends on a signal.
    case signalHandling
    /// A watch on the database's file, which wakes a follower.
    case watch(location: String)
    /// The replica's sync lock.
    case syncLock(location: String)
    /// A thread that reads for a follower.
    case followerThread
    /// A pipe that wakes a follower.
    case followerPipe
    /// A pipe that wakes a wait for a remote's commits.
    case wakePipe
  }

  /// Which bound a sync that gave up went past.
  public enum SyncBound: Sendable, Equatable {
    /// One exchange with the remote (a hello, a push, a page of a pull).
    case exchange
    /// The whole sync (a clone, a sync, a round of a live sync).
    case run
  }

  /// Which store an error came from, where that changes its words: a
  /// server's database exists without a log, a path holds nothing.
  public enum Store: Sendable {
    case lmdb, postgres, memory
  }

  /// Broad classes, for mapping to exit codes and HTTP statuses.
  public enum Category: Sendable, Equatable {
    /// Malformed input (CLI exit 64, HTTP 400).
    case invalidInput
    /// `expectVersion` mismatch (exit 75, HTTP 412).
    case conflict
    /// The item, prefix or point in history does not exist (exit 1, HTTP 404).
    case notFound
    /// Refused against the current state (exit 1, HTTP 409).
    case refused
    /// History that was there and was trimmed away on purpose (exit 1, HTTP 410).
    case gone
    /// The log or its derived tables are damaged (exit 1, HTTP 500).
    case damaged
    /// The store refuses this user the operation: a privilege it lacks, a
    /// read-only database (exit 1, HTTP 403).
    case forbidden
    /// The location holds what msglog cannot use: another program's data, a
    /// newer msglog's format (exit 1, HTTP 409).
    case incompatible
    /// The store cannot be reached, read or written (exit 1, HTTP 503).
    case unavailable
  }

  public var category: Category {
    switch self {
    case .invalidInput: return .invalidInput
    case .versionConflict: return .conflict
    case .noSuchItem, .itemInAnotherStream, .noPrefixMatch, .seqBeyondHead, .noDatabase, .noSuchEvent,
      .eventInAnotherStream, .eventNotInStream, .noRemovedPrefixMatch:
      return .notFound
    case .historyTrimmed: return .gone
    case .insertOutOfRange, .moveOutOfRange, .emptyStream, .idAlreadyUsed, .idUsedInAnotherStream, .itemMismatch,
      .itemRemoved, .itemErased, .ambiguousPrefix, .itemIsLive, .outOfRangeAtVersion, .nothingToUndo, .alreadyUndone,
      .notAnUndo,
      .undoneEventNotInLog,
      .cannotBackUp, .changeAppendedNothing, .changeOutOfOrder, .notAReplica, .syncRunning, .cannotClone,
      .changeForgotten, .changeNumberReused, .forgettingInReplica:
      return .refused
    case .corruptedRecord, .corruptedLog, .eventDoesNotFit, .derivedDamage, .outdatedFormat, .unrepairable:
      return .damaged
    case .readOnly, .permissionDenied, .replicaSecretRefused, .tokenRefused, .remoteForbids, .pushRefused,
      .untrustedRemote, .missingTables, .purgeNeedsOwner:
      return .forbidden
    case .notAMsglogDatabase, .anotherProgramsDatabase, .newerFormat, .backupNotSupported, .purgeNotSupported,
      .trimNotSupported,
      .anotherLog,
      .incompatibleRemote, .remoteLostTrack, .unacceptableRecord, .remoteFault:
      return .incompatible
    case .cannotRead, .cannotCreate, .diskFull, .changedDuringRead, .purgeHeldByReader, .purgeHeldByTransaction,
      .purgeHeldByLock, .purgeLeftStatistics, .storeFailure, .lmdbFailure,
      .systemRefused,
      .cannotFollow, .followedDatabaseDisplaced, .writtenDatabaseDisplaced,
      .rebuildDidNotVerify, .foreignFailure, .replicaMovedDuringPull, .changeDoesNotApply, .cannotReadInput,
      .cannotConnect, .connectionLost, .readCancelled, .syncTimedOut:
      return .unavailable
    case .line(_, let inner): return inner.category
    case .namedToken(let refusal):
      return refusal.isInvalidInput ? .invalidInput : refusal.isForbidden ? .forbidden : .refused
    }
  }

  public var description: String {
    switch self {
    case .invalidInput(let input): return input.description
    case .versionConflict(let stream, let expected, let actual):
      return "stream \(TerminalText.quoted(stream)) is at version \(actual), not \(expected)"
    case .insertOutOfRange(let stream, let index, let count):
      return "index \(index) is out of range: stream \(TerminalText.quoted(stream)) has \(count) "
        + "\(count == 1 ? "item" : "items"), so the index can be 0…\(count)"
    case .moveOutOfRange(let stream, let end, let index, let count):
      return "\(end.rawValue) index \(index) is out of range: stream \(TerminalText.quoted(stream)) has \(count) "
        + "\(count == 1 ? "item" : "items") (0…\(count - 1))"
    case .emptyStream(let stream): return "cannot move in stream \(TerminalText.quoted(stream)): it has no items"
    case .idAlreadyUsed(let id, 0): return "id \(id.text) was already used"
    case .idAlreadyUsed(let id, let seq), .idUsedInAnotherStream(let id, let seq, _):
      return "id \(id.text) was already used (inserted at seq \(seq))"
    case .itemMismatch(let index, let found, let expected):
      return "the item at index \(index) is \(found.text), not \(expected.text)"
    case .noSuchItem(let id, let stream): return "no item with id \(id.text) in stream \(TerminalText.quoted(stream))"
    case .itemRemoved(let id, let seq): return "item \(id.text) was already removed (at seq \(seq))"
    case .itemErased(let id, let seq): return "item \(id.text) was erased at seq \(seq)"
    case .itemInAnotherStream(let id, let home, let stream):
      return "item \(id.text) is in stream \(TerminalText.quoted(home)), not \(TerminalText.quoted(stream))"
    case .noPrefixMatch(let prefix, let stream):
      return "no item in stream \(TerminalText.quoted(stream)) has an id starting with \(prefix)"
    case .noRemovedPrefixMatch(let prefix, let stream):
      return "no removed item of stream \(TerminalText.quoted(stream)) has an id starting with \(prefix)"
    case .ambiguousPrefix(let prefix, let stream, let matches, let more):
      return "id prefix \(prefix) is ambiguous in stream \(TerminalText.quoted(stream)): it matches "
        + matches.map(\.text).joined(separator: ", ") + (more ? ", …" : "")
    case .seqBeyondHead(let seq, let head): return "seq \(seq) is beyond the head of the log (\(head))"
    case .historyTrimmed(let horizon): return "history before seq \(horizon) was trimmed"
    case .itemIsLive(let id, let stream):
      return "item \(id.text) is live in stream \(TerminalText.quoted(stream)): only a removed item can come back"
    case .outOfRangeAtVersion(let stream, let version, let index, let count):
      return "index \(index) is out of range: stream \(TerminalText.quoted(stream)) had \(count) "
        + "\(count == 1 ? "item" : "items") at version \(version)"
    case .nothingToUndo(let stream):
      return
        "nothing to undo in stream \(TerminalText.quoted(stream)): no event that is not undone would change anything"
    case .alreadyUndone(let seq, let by): return "event \(seq) is already undone (by event \(by))"
    case .noSuchEvent(let seq, let head):
      return head == 0
        ? "there is no event \(seq): the log is empty" : "there is no event \(seq): the log holds 1…\(head)"
    case .eventInAnotherStream(let seq, let home, let stream):
      return "event \(seq) is in stream \(TerminalText.quoted(home)), not \(TerminalText.quoted(stream))"
    case .eventNotInStream(let seq, let stream): return "event \(seq) is not in stream \(TerminalText.quoted(stream))"
    case .notAnUndo(let seq, let reason): return "this does not undo event \(seq): \(reason)"
    case .undoneEventNotInLog(let seq):
      return "the event it undoes, at seq \(seq), is not in the log the replica was reset to"
    case .corruptedRecord(let seq, let reason): return "corrupted record at seq \(seq): \(reason)"
    case .corruptedLog(let reason): return "corrupted log: \(reason)"
    case .eventDoesNotFit(let seq, let reason): return "corrupted log at seq \(seq): \(reason)"
    case .derivedDamage(let damage): return "the derived tables disagree with the log (\(damage))"
    case .outdatedFormat(let found):
      return "the derived tables were written by an older msglog (format \(found)) and must be rebuilt"
    case .unrepairable:
      return "the log itself is damaged: rebuilding the derived tables from it cannot help"
    case .noDatabase(let location, let store, let empty):
      // A server's database exists; it just holds no log yet.
      if store == .postgres { return "no msglog log in \(location)" }
      return "no database at \(location)" + (empty ? " (the directory is empty)" : "")
    case .notAMsglogDatabase(let location, let reason): return "\(location) is not a msglog database (\(reason))"
    case .anotherProgramsDatabase(let location):
      return "\(location) is not a msglog database (it is another program's LMDB environment)"
    case .readOnly(let location, _, let reason): return "cannot write to \(location): it is read-only (\(reason))"
    case .permissionDenied(let location, let writing, let reason, let missing):
      let what =
        missing.role.map { "\($0) lacks \(missing.words)" }
        ?? "\(writing ? "writing" : "reading") needs \(missing.words)"
      return "cannot \(writing ? "write to" : "read") \(location): \(reason) (\(what))"
    case .missingTables(let location, let tables):
      return "cannot write to \(location): \(MissingPrivileges.list(tables)) \(tables.count == 1 ? "is" : "are") "
        + "missing (the log was made by an older msglog), and only the owner of schema msglog makes them"
    case .cannotRead(let location, let reason): return "cannot read \(location): \(reason)"
    case .cannotCreate(let location, let reason): return "cannot create the database \(location): \(reason)"
    case .cannotBackUp(let location, let why): return "cannot back up to \(location): \(why)"
    case .backupNotSupported(let location):
      return "\(location) is not an LMDB directory: a hot backup copies LMDB databases only"
    case .diskFull(let store, let detail):
      switch store {
      case .lmdb: return "the disk is full: the database could not grow (\(detail))"
      case .postgres: return "the disk is full: the server has no room to write (\(detail))"
      case .memory: return "the disk is full: \(detail)"
      }
    case .storeFailure(_, let detail): return "database error: \(detail)"
    case .lmdbFailure(let failure): return "database error: \(failure)"
    case .changedDuringRead: return "the database changed while it was read, five times over"
    case .purgeHeldByReader(let location):
      return "cannot purge \(location) whole: another process's read kept holding old pages"
    case .purgeHeldByTransaction(let location, let holder):
      return "cannot purge \(location) whole: a transaction older than the purge (\(TerminalText.escape(holder))) "
        + "may still see erased row versions; run purge again once it has ended"
    case .purgeHeldByLock(let location, let table, let holder):
      return "cannot purge \(location) whole: \(TerminalText.escape(holder)) kept a lock on \(table), "
        + "which purge must rewrite; run purge again once it has ended"
    case .purgeNeedsOwner(let location, let owner):
      return "cannot purge \(location): purge rewrites msglog's tables, which only their owner, \(owner), may do"
    case .purgeLeftStatistics(let location, let reason):
      return "purged msglog's tables of \(location), but PostgreSQL's planner statistics may still hold sample "
        + "records of msglog.events: \(reason)"
    case .purgeNotSupported(let location): return "\(location) has no purge: it is not an LMDB directory"
    case .trimNotSupported(let location):
      return "\(location) cannot be trimmed: msglog trims LMDB and PostgreSQL databases only"
    case .forgettingInReplica(let location, let command):
      return "\(location) is a replica: \(command) its remote's log, which the replica follows"
    case .cannotConnect(let location, let reason): return "cannot connect to \(location): \(reason)"
    case .connectionLost(let location, let reason): return "lost the connection to \(location): \(reason)"
    case .readCancelled(let location, let reason): return "\(location) cancelled the read: \(reason)"
    case .newerFormat(let location, let found, let known):
      return "\(location) was written by a newer msglog (format \(found); this one knows \(known))"
    case .systemRefused(let need, let errno):
      let reason = errno.map { ": " + systemMessage($0) } ?? ""
      switch need {
      case .signalHandling: return "cannot set up signal handling" + reason
      case .watch(let location) where errno == EMFILE:
        // inotify_init1's EMFILE is the process's descriptors or, more
        // often, the user's inotify instances: both are said.
        return "cannot watch \(location)" + reason + ", or this user's inotify instances are all in use "
          + "(fs.inotify.max_user_instances, 128 by default: each live list or follower holds one)"
      case .watch(let location): return "cannot watch \(location)" + reason
      case .syncLock(let location): return "cannot lock \(location) for a sync" + reason
      case .followerThread: return "cannot follow: no thread could be started" + reason
      case .followerPipe: return "cannot follow: no pipe could be made" + reason
      case .wakePipe: return "cannot make a pipe" + reason
      }
    case .cannotFollow: return "this store cannot be followed"
    case .followedDatabaseDisplaced(let location):
      return "the database at \(location) was removed or replaced while it was followed"
    case .writtenDatabaseDisplaced(let location):
      return "the database at \(location) was removed or replaced after this log opened it: the write was not kept"
    case .rebuildDidNotVerify(let problem): return "the rebuild did not verify: \(problem)"
    case .foreignFailure(_, let words): return words
    case .replicaMovedDuringPull: return "the replica's head moved while a page of its remote was read"
    case .changeDoesNotApply(let change): return "change \(change) does not apply"
    case .changeAppendedNothing(let change):
      return
        "change \(change) of this replica appended nothing (it was refused or changed nothing): there is nothing of it to undo"
    case .changeOutOfOrder(let change, let done):
      return "change \(change) came out of order: changes up to \(done) are done, so the next is \(done + 1)"
    case .notAReplica(let location): return "\(location) is not a replica"
    case .anotherLog(let remote, let reason): return "\(remote) is not the log this replica was cloned from: \(reason)"
    case .incompatibleRemote(let remote, let reason), .remoteLostTrack(let remote, let reason):
      return "cannot sync with \(remote): \(reason)"
    case .syncRunning(let location): return "another sync of \(location) is running"
    case .cannotClone(let location, let reason): return "cannot clone into \(location): \(reason)"
    case .replicaSecretRefused(let replica, false):
      return "a push for replica \(replica.text) must carry its secret, and this one has none"
    case .replicaSecretRefused(let replica, true):
      return "the secret sent is not replica \(replica.text)'s: another replica may be using its id"
    case .changeForgotten(let change, let keptFrom):
      return "change \(change) was settled by its replica, which has pushed from change \(keptFrom) since: "
        + "its outcome is no longer kept"
    case .changeNumberReused(let change, let seq?):
      return "change \(change) of this replica was done at seq \(seq) as another change, made at another time: "
        + "the replica was restored from a backup or copied, and numbers its changes again"
    case .changeNumberReused(let change, nil):
      return "change \(change) of this replica adds an item, yet the remote answers that it changed nothing: "
        + "another change was done under its number (the replica was restored from a backup or copied, "
        + "and numbers its changes again), or the remote is not doing what it says"
    case .unacceptableRecord(let remote, let seq, .eventDoesNotFit(_, let reason)):
      // Its index or version does not follow from the events before it: the reason alone.
      return "\(remote) sent a record this replica cannot accept, at seq \(seq): \(reason)"
    case .unacceptableRecord(let remote, let seq, let reason):
      return "\(remote) sent a record this replica cannot accept, at seq \(seq): \(reason)"
    case .remoteFault(let remote, let fault): return "\(remote) broke the sync protocol: \(fault)"
    case .tokenRefused(let remote, let reason): return "\(remote) refused the token: \(reason)"
    case .remoteForbids(let remote, let reason): return "\(remote) refused this request: \(reason)"
    case .pushRefused(let remote, let reason): return "\(remote) refused this replica's changes: \(reason)"
    case .untrustedRemote(let remote, let reason): return "cannot trust \(remote): \(reason)"
    case .syncTimedOut(let remote, .exchange, let seconds):
      return "gave up on \(remote): it did not answer whole within \(Self.seconds(seconds))"
    case .syncTimedOut(let remote, .run, let seconds):
      return "gave up on \(remote): the sync took longer than its bound of \(Self.seconds(seconds))"
    case .line(let number, let inner): return "line \(number): \(inner)"
    case .cannotReadInput(let text): return text
    case .namedToken(let refusal): return refusal.description
    }
  }

  /// `2 s`, `0.5 s`.
  static func seconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() && seconds < 1e15 ? "\(Int(seconds)) s" : "\(seconds) s"
  }

  /// The error without its line number, for a front end that words both.
  public var innermost: MsglogError {
    if case .line(_, let inner) = self { return inner.innermost }
    return self
  }
}

extension MsglogError {
  /// A decoding failure of the record at `seq`.
  static func corrupted(seq: UInt64, _ reason: some CustomStringConvertible) -> MsglogError {
    .corruptedRecord(seq: seq, reason: reason.description)
  }

  /// What a hot standby's refusal of a write says (`readOnly`'s reason).
  package static let replicaRefusal = "this server is a read-only replica"

  /// Whether the database itself refused (a read-only server or role, a
  /// missing privilege or table): its operator's to fix.
  package var isTheStoresRefusal: Bool {
    switch self {
    case .readOnly, .permissionDenied, .missingTables: return true
    default: return false
    }
  }

  /// The remote does not hold the replica's changes as the replica does
  /// (`remoteLostTrack` over HTTP; the ledger's own errors in process,
  /// which a server answers as `lost-track`).
  package var isLostTrack: Bool {
    switch self {
    case .remoteLostTrack, .changeOutOfOrder, .changeForgotten, .changeNumberReused: return true
    default: return false
    }
  }
}

extension MsglogError {
  /// This refusal as one who may read only the streams `mayRead` allows
  /// is told it: another stream is named only where it may be read (a
  /// token that may write `team/*` learns nothing of `hr/pay` from an
  /// undo or a restore aimed there: it is told there is no such item or
  /// event in its own stream, which is true of what it can see).
  package func hidingStreams(_ mayRead: (StreamName) -> Bool) -> MsglogError {
    switch self {
    case .itemInAnotherStream(let id, let home, let stream) where !mayRead(home):
      return .noSuchItem(id, stream: stream)
    case .eventInAnotherStream(let seq, let home, let stream) where !mayRead(home):
      return .eventNotInStream(seq: seq, stream: stream)
    case .idUsedInAnotherStream(let id, let seq, let home):
      // The id is taken whoever asks; where, only to one who may read it.
      return .idAlreadyUsed(id, insertSeq: home.map(mayRead) == true ? seq : 0)
    case .line(let number, let inner):
      return .line(number, inner.hidingStreams(mayRead))
    default:
      return self
    }
  }
}
