import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// `msglog purge` on PostgreSQL: what an erase left in msglog's tables.
///
/// An erase updates its rows: PostgreSQL writes a new row version and
/// leaves the old one, text and all, as a dead tuple in the table's pages
/// (and its TOAST table's, for a record past 2 kB) until a vacuum makes
/// the room reusable — and even then a plain VACUUM does not clear the
/// bytes. So purge rewrites every table of schema msglog with `VACUUM
/// FULL` (a new file holding only live rows, its indexes and TOAST table
/// rebuilt; the old file is truncated to nothing at once), then asks for a
/// `CHECKPOINT` so that the new files are on disk and the old ones gone.
///
/// The planner's statistics may hold sample records too (an autovacuum's
/// ANALYZE of a database made before msglog stopped it): purge drops them
/// (`dropRecordStatistics`) and rewrites `pg_statistic` as well, which
/// PostgreSQL lets a superuser or the database's owner do. When it cannot
/// — another role, a view on the column — it says so after the rewrite
/// (`purgeLeftStatistics`), as it does of a transaction that held it.
///
/// `VACUUM FULL` copies a dead row version that a running transaction's
/// snapshot may still see ("recently dead") into the new file: a snapshot
/// taken before the erase committed — a long report, a standby's
/// feedback, an autovacuum's ANALYZE of these very tables — keeps the
/// erased text. So purge first waits (about ten seconds at most) until no
/// snapshot that counts for this database is older than purge's own
/// start; one that outlasts the wait is named in the error after the
/// rewrite, and purge run again once it has ended finishes the job (as
/// LMDB's purge does with a reader's old pages).
///
/// `VACUUM FULL` takes each table's ACCESS EXCLUSIVE lock for its
/// rewrite: readers and writers wait for it (a few seconds for a million
/// events), none fails. It needs the tables' owner (the role that ran
/// `msglog init`); `CHECKPOINT` a superuser or `pg_checkpoint`, and is
/// left to the server's own schedule without them. What it cannot reach:
/// the WAL and its archive, base backups and standbys' copies made before
/// (they age out by the server's own retention), copies made elsewhere.
extension PostgresStore {
  /// How many times purge looks again, waiting twice as long each time
  /// from 10 ms, for the snapshots older than itself to end (about ten
  /// seconds in all).
  static let purgeWaits = 10
  /// After how many looks a holder still there is said (about 300 ms):
  /// a short wait, as on any busy server, says nothing.
  static let purgeWaitSaid = 5

  package func purge(waiting: (String) -> Void) throws -> UInt64? {
    try withConnection(writing: true) { connection in
      // VACUUM FULL of a table another role owns only warns: refused here instead.
      if let owner = try connection.execute(PostgresSchema.tablesOwner.sql).text(0, 0) {
        throw MsglogError.purgeNeedsOwner(location: shown, owner: owner)
      }
      // Every transaction that committed before this one (the erase) is
      // dead to a snapshot whose xmin is not older than it.
      let start = try connection.execute("SELECT txid_current() % 4294967296").int64(0, 0) ?? 0
      var holder = try Self.snapshot(olderThan: start, on: connection)
      var wait: UInt32 = 10_000
      for look in 0..<Self.purgeWaits where holder != nil {
        if look == Self.purgeWaitSaid, let holder { waiting(holder + ", older than the purge,") }
        usleep(wait)
        wait *= 2
        holder = try Self.snapshot(olderThan: start, on: connection)
      }
      let sizes = """
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c \
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'msglog' AND c.relkind = 'r'
        """
      let before = try connection.execute(sizes).int64(0, 0) ?? 0
      let tables = try connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'msglog' ORDER BY tablename")
      try connection.execute(PostgresSchema.noRecordStatistics.sql)
      let statistics = try Self.dropRecordStatistics(on: connection)
      // One wait for every table's lock (`rewriteTable`), not one each.
      let locksDue = ContinuousClock.now + .milliseconds(Self.purgeLockWait)
      /// Rewrites every table whose lock it takes; the first one a session
      /// kept locked, with that session (the others are rewritten still).
      func rewrite() throws -> (table: String, holder: String)? {
        var held: (table: String, holder: String)? = nil
        for row in 0..<tables.count {
          guard let name = tables.text(row, 0) else { continue }
          let table = "msglog.\"" + name.replacing("\"", with: "\"\"") + "\""
          if let holder = try rewriteTable(table, until: locksDue, on: connection, waiting: waiting) {
            held = held ?? (table, holder)
          }
        }
        if statistics.rewrite {
          if let holder = try rewriteTable("pg_catalog.pg_statistic", until: locksDue, on: connection, waiting: waiting)
          {
            held = held ?? ("pg_catalog.pg_statistic", holder)
          } else {
            try connection.execute(PostgresSchema.clearStatisticsLeft.sql)
          }
        }
        return held
      }
      var locked = try rewrite()
      if holder != nil {
        // Still there: it was there all through the rewrite. Gone: it
        // ended during it, and nothing older than purge can begin: once
        // more, clean.
        holder = try Self.snapshot(olderThan: start, on: connection)
        if holder == nil { locked = try rewrite() }
      }
      do { try connection.execute("CHECKPOINT") } catch let error as PostgresError
        where error.sqlState == PostgresError.insufficientPrivilege
      {}
      // Said after the rewrite, which scrubbed all the rest.
      if let holder { throw MsglogError.purgeHeldByTransaction(location: shown, holder: holder) }
      if let locked { throw MsglogError.purgeHeldByLock(location: shown, table: locked.table, holder: locked.holder) }
      if let left = statistics.left { throw MsglogError.purgeLeftStatistics(location: shown, reason: left) }
      let after = try connection.execute(sizes).int64(0, 0) ?? 0
      return UInt64(max(before - after, 0))
    }
  }

  /// How long one try at a table's lock may queue (`lock_timeout`), and
  /// how long purge keeps trying, all tables together, before it names the
  /// holder (milliseconds).
  static let purgeLockTry = 100
  static let purgeLockWait = 10_000

  /// `VACUUM FULL table`, its ACCESS EXCLUSIVE lock taken in short tries;
  /// nil once done, or who kept the lock when `due` passed (a table met
  /// after that gets one try). A session that keeps a lock on the table (an
  /// application idle in a transaction that read it) would hold the
  /// rewrite for as long as it lasts — and every reader and writer of the
  /// table queues behind the rewrite's lock request meanwhile (`serve`
  /// froze). So each try queues `purgeLockTry` at most, and what holds it
  /// is said after `purgeWaitSaid` tries.
  private func rewriteTable(
    _ table: String, until due: ContinuousClock.Instant, on connection: Connection, waiting: (String) -> Void
  ) throws -> String? {
    try connection.execute("SET lock_timeout = \(Self.purgeLockTry)")
    let holder: String?
    do {
      holder = try rewriteInTries(table, until: due, on: connection, waiting: waiting)
    } catch {
      resetLockTimeout(on: connection)
      throw error
    }
    resetLockTimeout(on: connection)
    return holder
  }

  private func rewriteInTries(
    _ table: String, until due: ContinuousClock.Instant, on connection: Connection, waiting: (String) -> Void
  ) throws -> String? {
    var pause: UInt32 = 20_000
    var tries = 0
    while true {
      do {
        try connection.execute("VACUUM FULL \(table)")
        return nil
      } catch {
        guard error.sqlState == PostgresError.lockNotAvailable else { throw error }
      }
      tries += 1
      if ContinuousClock.now >= due { return try Self.lockHolder(of: table, on: connection) }
      if tries == Self.purgeWaitSaid {
        waiting(try Self.lockHolder(of: table, on: connection) + ", which keeps a lock on \(table),")
      }
      usleep(pause)
      pause = min(pause * 2, 500_000)
    }
  }

  private func resetLockTimeout(on connection: Connection) {
    do { _ = try connection.execute("RESET lock_timeout") } catch {}
  }

  /// Who holds a lock on `table` of this database that keeps purge's
  /// rewrite out — a session of another backend, or a prepared transaction
  /// (which has none: found by the lock on its transaction id, which it
  /// holds under the same virtual transaction) — named as
  /// `snapshot(olderThan:)` names one.
  /// (`pg_locks` is the server's: another database's tables have the same
  /// numbers when it was made from this one, and `pg_statistic` has one
  /// number in every database.)
  private static func lockHolder(of table: String, on connection: Connection) throws -> String {
    let holders = try connection.execute(
      """
      SELECT coalesce('pid ' || a.pid || coalesce(' (' || nullif(concat_ws(', ', a.usename, \
      nullif(a.application_name, ''), a.state), '') || ')', ''), \
      (SELECT format('prepared transaction %s', p.gid) FROM pg_prepared_xacts p \
      JOIN pg_locks t ON t.locktype = 'transactionid' AND t.transactionid = p.transaction \
      WHERE t.virtualtransaction = l.virtualtransaction LIMIT 1)) \
      FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid \
      WHERE l.locktype = 'relation' AND l.relation = $1::regclass AND l.granted \
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
      AND l.pid IS DISTINCT FROM pg_backend_pid() \
      ORDER BY a.xact_start NULLS FIRST LIMIT 1
      """, [.text(table)])
    guard holders.count > 0, let holder = holders.text(0, 0) else { return "another session" }
    return holder
  }

  /// Drops the records' statistics an older database's ANALYZE gathered:
  /// whether `pg_statistic` is to be rewritten (a superuser or the
  /// database's owner always does: a row dropped before may still be in
  /// its file), and why statistics that were there may still be, if so —
  /// said by every purge until one rewrites the file (`statisticsLeft`).
  private static func dropRecordStatistics(on connection: Connection) throws -> (rewrite: Bool, left: String?) {
    let rewrite = try connection.execute(PostgresSchema.mayVacuumStatistics.sql).bool(0, 0) == true
    var dropped = try connection.execute(PostgresSchema.statisticsLeft.sql).bool(0, 0) == true
    if try connection.execute(PostgresSchema.recordStatistics.sql).bool(0, 0) == true {
      // Marked before they are dropped (each statement commits on its
      // own): a purge cut after the drop still knows the file holds them.
      try connection.execute(PostgresSchema.markStatisticsLeft.sql)
      do {
        try connection.execute(PostgresSchema.dropRecordStatistics.sql)
      } catch {
        return (rewrite, "they could not be dropped (\(error.message))")
      }
      dropped = true
    }
    guard rewrite || !dropped else {
      return (
        false,
        "they are dropped, but their old row stays in pg_statistic's file, which only a superuser "
          + "or the database's owner may rewrite"
      )
    }
    return (rewrite, nil)
  }

  /// What holds a snapshot older than transaction `start` (its low 32
  /// bits, as `xid`) where `VACUUM FULL` of this database's tables has to
  /// respect it, as PostgreSQL computes that horizon (`ComputeXidHorizons`:
  /// the older of a session's snapshot and its own transaction id, so an
  /// application idle in a transaction that wrote before the erase counts,
  /// though it holds no snapshot between statements): a backend of this
  /// database or of none (a walsender, whose xmin is a standby's
  /// feedback), a replication slot. And a transaction of any database
  /// with an id older than `start`, a prepared one too:
  /// every snapshot taken here while it runs (`VACUUM FULL`'s own, an
  /// ANALYZE's) counts it as running and so has an xmin at least as old —
  /// in CI, another test's database on the same server. The oldest is
  /// named (the one the wait is for at the last); nil when none.
  /// (Any role sees another's `backend_xmin`; its backend type only its own.)
  /// An autovacuum worker's plain VACUUM is not waited for: PostgreSQL
  /// leaves its snapshot out of the horizon (its ANALYZE it does not).
  private static func snapshot(olderThan start: Int64, on connection: Connection) throws -> String? {
    func older(_ column: String) -> String { "age(\(column)) > age('\(start)'::xid)" }
    let holders = try connection.execute(
      """
      SELECT holder FROM (\
      SELECT format('pid %s', pid) || coalesce(' (' || nullif(concat_ws(', ', backend_type, \
      nullif(application_name, '')), '') || ')', '') || coalesce(' of database ' || datname, ''), \
      greatest(age(backend_xmin), age(backend_xid)) \
      FROM pg_stat_activity WHERE pid <> pg_backend_pid() \
      AND NOT (backend_type = 'autovacuum worker' AND query LIKE 'autovacuum: VACUUM %' \
      AND query NOT LIKE 'autovacuum: VACUUM ANALYZE %') \
      AND (((datid IS NULL OR datname = current_database()) AND \(older("backend_xmin"))) \
      OR \(older("backend_xid"))) \
      UNION ALL SELECT format('replication slot %s', slot_name), age(xmin) FROM pg_replication_slots \
      WHERE xmin IS NOT NULL AND \(older("xmin")) \
      UNION ALL SELECT format('prepared transaction %s of database %s', gid, database), age(transaction) \
      FROM pg_prepared_xacts WHERE \(older("transaction"))\
      ) AS holders (holder, age) ORDER BY age DESC LIMIT 1
      """)
    return holders.count > 0 ? holders.text(0, 0) : nil
  }
}
