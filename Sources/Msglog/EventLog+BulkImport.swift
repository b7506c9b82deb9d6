import MsglogCore
import MsglogLMDB
import MsglogPostgres

extension EventLog {
  /// `importLines` into streams that have no events yet, on LMDB or
  /// PostgreSQL: built in one pass and appended (or copied) table by table
  /// (`BulkImport`), the same records and rows the ledger would write. Nil when the import is not one the
  /// bulk path builds — a stream with events, an id the log knows, a line
  /// the ledger would refuse: nothing was committed, and the caller
  /// performs it command by command (which also words any refusal).
  func bulkImport(_ requests: [WriteRequest], progress: ((Int, Int) -> Void)?) throws -> ImportResult? {
    guard !requests.isEmpty, configuration.access == .readWrite, store is LMDBLog || store is PostgresStore,
      requests.allSatisfy(BulkImport.builds)
    else { return nil }
    do {
      return try store.write(reserving: Self.estimatedBytes(of: requests)) { writer in
        guard let loader = writer as? any BulkLoading else { throw BulkImport.Unfit() }
        var build = try BulkImport(
          writer: loader, now: writer.commitTime ?? configuration.clock(),
          checkpointInterval: UInt64(configuration.checkpointInterval), capacity: requests.count)
        try build.prepare(streamsOf: requests)
        try loader.appendEvents { append in
          for (i, request) in requests.enumerated() {
            if i % 1024 == 0 { progress?(i, requests.count) }
            try build.perform(request, append: append)
          }
        }
        try build.finish()
        progress?(requests.count, requests.count)
        return ImportResult(imported: build.appended, head: build.nextSeq - 1)
      }
    } catch is BulkImport.Unfit {
      return nil
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }
}
