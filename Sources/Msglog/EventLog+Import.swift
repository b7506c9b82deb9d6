import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// `import`: JSON lines, parsed a piece at a time (`ImportLineReader`) and
/// performed as they come — into empty streams by the bulk build
/// (`BulkImport`), else by the ledger, command by command — all in one
/// write that commits only once every line is in.
extension EventLog {
  /// Applies import lines (JSON, one object per line; see docs/REFERENCE.md)
  /// atomically: a malformed or refused line throws `.line(n, error)` and
  /// nothing is written; the first line that fails is the one named. A
  /// UTF-8 byte-order mark and blank lines are skipped.
  public func importLines(
    _ input: [UInt8], defaultStream: StreamName = .main, progress: ((Int, Int) -> Void)? = nil
  ) throws -> ImportResult {
    try input.withUnsafeBytes { bytes in
      try importLines(from: .memory(bytes), defaultStream: defaultStream, progress: progress)
    }
  }

  /// `importLines` of the file at `path`, read a block at a time: a large
  /// file is never held in memory whole (a pipe, such as a FIFO, is read
  /// whole first). A file that cannot be read throws `cannotReadInput`.
  public func importLines(
    contentsOf path: String, defaultStream: StreamName = .main, progress: ((Int, Int) -> Void)? = nil
  ) throws -> ImportResult {
    let fd = try ImportInput.open(path)
    defer { close(fd) }
    guard ImportInput.isRegularFile(fd) else {
      // A pipe or a device is read once, whole: an import may read its lines twice.
      return try importLines(try readDescriptor(fd, what: path), defaultStream: defaultStream, progress: progress)
    }
    return try importLines(from: .file(descriptor: fd, shown: path), defaultStream: defaultStream, progress: progress)
  }

  /// `importLines` of `input`: into streams with no events, the bulk
  /// build; when it does not fit (or on a replica, or when a line needs
  /// the ledger), the ledger, reading the lines again from the start. Every
  /// pass reads what the first found (a file that grows meanwhile is read
  /// to where it ended then).
  package func importLines(
    from input: ImportInput, defaultStream: StreamName, progress: ((Int, Int) -> Void)?
  ) throws -> ImportResult {
    // A trimmed log's export begins with its bases: the ledger's import,
    // into an empty database, starting from them.
    let (bases, rest) = try input.takingBases()
    if !bases.isEmpty {
      if try replicaState() != nil {
        throw MsglogError.line(1, .invalidInput(.write("a base line goes into an empty database, not a replica")))
      }
      return try ledgerImport(try rest.measure(), defaultStream, progress, from: bases)
    }
    // A regular file's lines are parsed from now on, on a thread of their
    // own, while this one measures them and makes the database: a short
    // import's builder waited 3 ms of 30 for its first piece. The file's
    // end is fixed first, so that both read the same lines. Stopped unused
    // when the import goes through the ledger (it reads from the start).
    let input = input.endFixed()
    var parsingAhead: ImportLineReader? = nil
    if case .file(_, _, _?) = input, configuration.access == .readWrite, store.loadsInBulk {
      parsingAhead = ImportLineReader(input, defaultStream: defaultStream)
    }
    defer { parsingAhead?.stop() }
    let measure = try input.measure()
    // Nothing to do (no lines, or blank ones only): nothing is written, not even a new database.
    // But a path that is no msglog database (a file, another program's
    // files) is said as every command says it, not taken for an empty log.
    guard !measure.blank else {
      let head: UInt64
      do { head = try headSeq() } catch MsglogError.noDatabase { head = 0 }
      return ImportResult(imported: 0, head: head)
    }
    if !measure.needsLedger, try replicaState() == nil,
      let bulk = try bulkImport(measure, defaultStream, progress, parsingAhead: parsingAhead)
    {
      return bulk
    }
    parsingAhead?.stop()
    return try ledgerImport(measure, defaultStream, progress)
  }

  /// The lines of `input` piece by piece (`ImportLineReader`), the reader
  /// stopped however `body` ends; `progress`, when given, told of the last
  /// line of each piece.
  ///
  /// - Parameters:
  ///   - after: lines before the input's (base lines, read first): the
  ///     lines are numbered in the whole input.
  ///   - started: a reader already parsing `input`, none of its pieces
  ///     taken (a stopped one refuses to go on: `ImportLineReader.next`).
  private func forEachPiece(
    of input: ImportInput, defaultStream: StreamName, lines: Int, after: Int = 0,
    progress: ((Int, Int) -> Void)? = nil, started: ImportLineReader? = nil,
    _ body: (ImportLineReader.Piece) throws -> Void
  ) throws {
    let reader = started ?? ImportLineReader(input, defaultStream: defaultStream)
    defer { reader.stop() }
    progress?(0, lines)
    var done = 0
    while var piece = try next(of: reader, after: after) {
      if after > 0 { piece.lineNumbers = piece.lineNumbers.map { $0 + after } }
      try body(piece)
      done = piece.lineNumbers.last ?? done
      progress?(done, lines)
    }
    progress?(lines, lines)
  }

  private func next(of reader: ImportLineReader, after: Int) throws(MsglogError) -> ImportLineReader.Piece? {
    do {
      return try reader.next()
    } catch .line(let number, let error) {
      throw .line(number + after, error)
    }
  }

  /// The ledger's import: the pieces performed in order in one write,
  /// with the derived rows flushed into it every `flushInterval` requests
  /// (as one long batch would be), so that it holds bounded state. (It
  /// does not commit in pieces in a new database's staging directory as
  /// the bulk build does: it reads back and rewrites the pages it wrote,
  /// and pieces made the import hold more, 483 MiB against 322 MiB for a
  /// million lines, and the file a third larger with the pages they freed.)
  private func ledgerImport(
    _ measure: ImportInput.Measure, _ defaultStream: StreamName, _ progress: ((Int, Int) -> Void)?,
    from bases: [ImportedBase] = []
  ) throws -> ImportResult {
    let (input, lines) = (measure.input, measure.lines)
    if try replicaState() != nil {
      // A replica's writes pend on its local view, as one batch.
      var requests: [WriteRequest] = []
      var numbers: [Int] = []
      try forEachPiece(of: input, defaultStream: defaultStream, lines: lines) { piece in
        requests += piece.requests
        numbers += piece.lineNumbers
      }
      let appended = try perform(WriteBatch(requests), lineNumbers: numbers, progress: progress).compactMap { $0 }
      let changes = appended.compactMap(\.pending)
      return ImportResult(
        imported: appended.count, head: appended.last?.event.seq ?? (try? headSeq()) ?? 0,
        pending: changes.first.map { $0...changes.last! })
    }
    var imported = 0
    var head: UInt64? = nil
    try write(reserving: Self.estimatedBytes(of: measure)) { session in
      // The store may run this again (a full map, a database made meanwhile by another process).
      imported = 0
      head = nil
      do {
        try session.seed(bases)
      } catch let fault as BaseFault {
        throw MsglogError.line(fault.index + 1, fault.error)
      }
      var sinceFlush = 0
      try forEachPiece(of: input, defaultStream: defaultStream, lines: lines, after: bases.count, progress: progress) {
        piece in
        for outcome in try session.perform(WriteBatch(piece.requests), lineNumbers: piece.lineNumbers) {
          guard let outcome else { continue }
          imported += 1
          head = outcome.event.seq
        }
        sinceFlush += piece.requests.count
        if sinceFlush >= LedgerSession.flushInterval {
          try session.finish()
          sinceFlush = 0
        }
      }
    }
    // Nothing appended (no lines, or only moves onto themselves): the head is where it was.
    return ImportResult(imported: imported, head: head ?? (try? headSeq()) ?? 0)
  }

  /// What an import may add to the database, for the map to grow once
  /// ahead of it (a generous guess is free: the map is address space): as
  /// `WriteBatch.estimatedBytes`, from the bytes and the requests.
  static func estimatedBytes(of measure: ImportInput.Measure) -> Int {
    let bytes: Int
    switch measure.input {
    case .memory(let memory): bytes = memory.count
    case .file(let fd, _, let end):
      var info = stat()
      bytes = end ?? (fstat(fd, &info) == 0 ? Int(info.st_size) : 0)
    }
    return 2 * bytes + 512 * measure.requests
  }

  /// `importLines` into streams that have no events yet, on LMDB or
  /// PostgreSQL: built in one pass and appended (or copied) table by table
  /// (`BulkImport`), the same records and rows the ledger would write. Nil
  /// when the import is not one the bulk path builds — a stream with
  /// events, an id the log knows, a line the ledger would refuse or the
  /// bulk path does not build: nothing was committed, and the caller
  /// performs it command by command (which also words any refusal). A line
  /// that does not parse throws, as it would there.
  ///
  /// `parsingAhead`: a reader already parsing the input, for the write's
  /// first run only — a store runs its write again (another process made
  /// the database first, a full map, a head that moved), and a second run
  /// given the reader the first used up imported nothing, "imported 0
  /// events", exit 0 (a review found it; two imports at once showed it).
  func bulkImport(
    _ measure: ImportInput.Measure, _ defaultStream: StreamName, _ progress: ((Int, Int) -> Void)?,
    parsingAhead: ImportLineReader? = nil
  ) throws -> ImportResult? {
    var unused = parsingAhead
    return try bulkImport(requests: measure.requests, reserving: Self.estimatedBytes(of: measure)) { body in
      let started = unused
      unused = nil
      try forEachPiece(
        of: measure.input, defaultStream: defaultStream, lines: measure.lines, progress: progress, started: started,
        body)
    }
  }

  /// `bulkImport` of requests already made (tests hand the bulk path a
  /// workload), as one piece.
  func bulkImport(_ requests: [WriteRequest]) throws -> ImportResult? {
    guard !requests.isEmpty else { return nil }
    let bytes = WriteBatch.estimatedBytes(of: requests)
    return try bulkImport(requests: requests.count, reserving: bytes) { body in
      try body(ImportLineReader.Piece(requests: requests, lineNumbers: Array(1...requests.count)))
    }
  }

  /// `bulkImport` of the pieces `forEachPiece` hands out, at most
  /// `requests` of them, which may add about `bytes` to the database.
  private func bulkImport(
    requests: Int, reserving bytes: Int,
    pieces forEachPiece: (_ body: (ImportLineReader.Piece) throws -> Void) throws -> Void
  ) throws -> ImportResult? {
    guard requests > 0, requests <= BulkImport.maximumEvents, configuration.access == .readWrite,
      store.loadsInBulk
    else {
      return nil
    }
    do {
      return try store.write(reserving: bytes, touching: []) { writer in
        guard let loader = writer as? any BulkLoading else { throw BulkImport.Unfit() }
        var build = try BulkImport(
          writer: loader, now: writer.commitTime ?? configuration.clock(),
          checkpointInterval: UInt64(configuration.checkpointInterval), capacity: requests)
        try forEachPiece { piece in
          try loader.appendEvents { append in
            for request in piece.requests { try build.perform(request, append: append) }
          }
        }
        try build.finish()
        return ImportResult(imported: build.appended, head: build.nextSeq - 1)
      }
    } catch is BulkImport.Unfit {
      return nil
    } catch let error as MsglogError {
      throw error
    } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }
}
