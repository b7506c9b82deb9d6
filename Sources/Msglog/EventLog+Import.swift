import MsglogCore
import MsglogLMDB
import MsglogPostgres

/// `import`: JSON lines in (`ImportLine`, every line read before anything
/// is written), then into empty streams the bulk build
/// (`BulkImport`), else the ledger, command by command, in one transaction.
extension EventLog {
  /// Applies import lines (JSON, one object per line; see docs/REFERENCE.md)
  /// atomically: a malformed or refused line throws `.line(n, error)` and
  /// nothing is written. A UTF-8 byte-order mark and blank lines are skipped.
  public func importLines(
    _ input: [UInt8], defaultStream: StreamName = .main, progress: ((Int, Int) -> Void)? = nil
  ) throws -> ImportResult {
    let parsed = input.withUnsafeBytes { all in
      Result { () throws(MsglogError) in
        try Self.readImportLines(
          input.starts(with: [0xEF, 0xBB, 0xBF]) ? UnsafeRawBufferPointer(rebasing: all.dropFirst(3)) : all,
          defaultStream: defaultStream)
      }
    }
    let (requests, lineNumbers) = try parsed.get()
    if let bulk = try bulkImport(requests, progress: progress) { return bulk }
    let outcomes = try perform(WriteBatch(requests), lineNumbers: lineNumbers, progress: progress)
    let appended = outcomes.compactMap { $0 }
    // Nothing appended (no lines, or only moves onto themselves): the head is where it was.
    let head = appended.last?.event.seq ?? (try? headSeq()) ?? 0
    return ImportResult(imported: appended.count, head: head)
  }

  /// The requests of import lines, with the number of the line each came
  /// from (blank lines are skipped, and count).
  static func readImportLines(_ body: UnsafeRawBufferPointer, defaultStream: StreamName) throws(MsglogError) -> (
    [WriteRequest], [Int]
  ) {
    try ImportLineHalves.read(body) { part throws(MsglogError) in
      try readImportLines(part: part, defaultStream: defaultStream)
    }
  }

  /// `readImportLines` of a part of the input, its lines numbered from 1.
  static func readImportLines(part body: UnsafeRawBufferPointer, defaultStream: StreamName) throws(MsglogError) -> (
    [WriteRequest], [Int]
  ) {
    var requests: [WriteRequest] = []
    var lineNumbers: [Int] = []
    let lines = ImportLine.lineCount(body)
    requests.reserveCapacity(lines)
    lineNumbers.reserveCapacity(lines)
    var reader = ImportLine.Reader(defaultStream: defaultStream)
    var number = 0
    var start = 0
    while start < body.count {
      let end = ImportLine.endOfLine(body, from: start)
      number += 1
      let line = UnsafeRawBufferPointer(rebasing: body[start..<end])
      start = end + 1
      if ImportLine.isBlank(line) { continue }
      do {
        requests.append(try reader.parse(line))
        lineNumbers.append(number)
      } catch {
        throw MsglogError.line(number, error)
      }
    }
    return (requests, lineNumbers)
  }

  /// `importLines` into streams that have no events yet, on LMDB or
  /// PostgreSQL: built in one pass and appended (or copied) table by table
  /// (`BulkImport`), the same records and rows the ledger would write. Nil when the import is not one the
  /// bulk path builds — a stream with events, an id the log knows, a line
  /// the ledger would refuse: nothing was committed, and the caller
  /// performs it command by command (which also words any refusal).
  func bulkImport(_ requests: [WriteRequest], progress: ((Int, Int) -> Void)?) throws -> ImportResult? {
    guard !requests.isEmpty, configuration.access == .readWrite, store is LMDBStore || store is PostgresStore,
      requests.allSatisfy(BulkImport.builds)
    else { return nil }
    do {
      return try store.write(reserving: WriteBatch.estimatedBytes(of: requests), touching: []) { writer in
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
