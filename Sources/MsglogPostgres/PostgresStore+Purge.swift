import MsglogCore

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
/// `VACUUM FULL` takes each table's ACCESS EXCLUSIVE lock for its
/// rewrite: readers and writers wait for it (a few seconds for a million
/// events), none fails. It needs the tables' owner (the role that ran
/// `msglog init`); `CHECKPOINT` a superuser or `pg_checkpoint`, and is
/// left to the server's own schedule without them. What it cannot reach:
/// the WAL and its archive, base backups and standbys' copies made before
/// (they age out by the server's own retention), copies made elsewhere.
extension PostgresStore {
  package func purge() throws -> UInt64? {
    try withConnection(writing: true) { connection in
      let sizes = """
        SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::int8 FROM pg_class c \
        JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'msglog' AND c.relkind = 'r'
        """
      let before = try connection.execute(sizes).int64(0, 0) ?? 0
      let tables = try connection.execute(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'msglog' ORDER BY tablename")
      for row in 0..<tables.count {
        guard let name = tables.text(row, 0) else { continue }
        let quoted = "\"" + name.replacing("\"", with: "\"\"") + "\""
        try connection.execute("VACUUM FULL msglog.\(quoted)")
      }
      do { try connection.execute("CHECKPOINT") } catch let error as PostgresError
        where error.sqlState == PostgresError.insufficientPrivilege
      {}
      let after = try connection.execute(sizes).int64(0, 0) ?? 0
      return UInt64(max(before - after, 0))
    }
  }
}
