/// Checks a whole store: every record, seq contiguity, the replay, and every
/// derived table against what the replay says it must hold.
///
/// It never stops at the first problem and never trusts a derived row: each
/// is read on its own, and one that cannot be read is a problem named like
/// any other. A damaged record is named once; the stream it belongs to is
/// not checked further (its later events would only repeat the damage), and
/// the derived tables are not compared with a log that is itself damaged.
package enum Verifier {
  /// How many problems to name before summarising the rest.
  static let problemLimit = 100

  package static func verify(_ reader: any LogReader, progress: ((VerifyProgress) -> Void)? = nil) throws
    -> VerifyReport
  {
    // A file cut short (or a free list too damaged to tell): a read of a
    // page it lacks could fault.
    switch Result(catching: { try reader.filesCutShort() }) {
    case .success(nil): break
    case .success(let cut?): return VerifyReport(problems: ["\(cut)"], logIsIntact: false)
    case .failure(let error): return VerifyReport(problems: ["\(error)"], logIsIntact: false)
    }
    var check = Check(reader: reader)
    check.progress = progress
    try check.log()
    check.checkTail()
    if check.report.logIsIntact { try check.derivedTables() }
    check.syncState()
    // A privilege the role lacks is not damage: the whole verify is refused, naming it.
    if let refused = check.refused { throw refused }
    return check.finish()
  }

  struct Check {
    let reader: any LogReader
    var report = VerifyReport()
    var state = DerivedState()
    /// Streams whose replay hit damage: not checked further.
    var broken: Set<StreamName> = []
    /// A damaged record whose stream could not be told: nothing after it is replayed.
    var replayStopped = false
    var suppressed = 0
    /// Checkpoint seqs found in the store, by stream, and those matched by the replay.
    var checkpointSeqs: [StreamName: [UInt64]] = [:]
    var checkpointAt: [UInt64: StreamName] = [:]
    /// Derived tables with a problem named: their row counts would only repeat it.
    var damagedTables: Set<String> = []
    /// The seq of each event made from a replica's change, by replica and change.
    var origins: [ItemID: [UInt64: [UInt64]]] = [:]
    var progress: ((VerifyProgress) -> Void)? = nil
    /// A record breaks the limits every write is held to (`checkLimits`).
    var pastLimits = false
    /// The seq of the log's last event as read (the one before its horizon
    /// for a trimmed log with none since).
    var lastSeq: UInt64 = 0

    /// The streams the heads name, read once from their keys
    /// (`streamHeadNames`): the checkpoints are listed by them, a damaged
    /// record's stream is looked for among them, and they are checked
    /// against the streams the log has.
    let headNames: Result<(names: [StreamName], notNames: Int), any Error>

    init(reader: any LogReader) {
      self.reader = reader
      headNames = Result { try reader.streamHeadNames() }
    }

    /// The first read the store refused for a privilege the role lacks.
    var refused: MsglogError? = nil

    /// A read that failed: a problem named like any other, unless the store
    /// refused it for a privilege (then no problem is, as none was seen).
    mutating func failed(_ error: any Error, _ text: String) {
      if let error = error as? MsglogError, error.category == .forbidden {
        if refused == nil { refused = error }
        return
      }
      problem(text)
    }

    mutating func problem(_ text: String) {
      if text.hasPrefix("table ") {
        damagedTables.insert(String(text.dropFirst(6).prefix { $0 != ":" }))
      }
      if report.problems.count < problemLimit { report.problems.append(text) } else { suppressed += 1 }
    }

    mutating func finish() -> VerifyReport {
      // A record no write may store is the log's own problem: no rebuild mends it.
      if pastLimits { report.logIsIntact = false }
      if suppressed > 0 { report.problems.append("… and \(suppressed) more problems") }
      report.streams = state.projections.count
      report.liveItems = state.projections.values.reduce(0) { $0 + $1.count }
      return report
    }

    // MARK: - The log

    mutating func log() throws {
      // Checkpoints are compared when the replay reaches their seq.
      for stream in try streamsWithHeads() {
        do {
          let seqs = try reader.checkpointSeqs(of: stream)
          checkpointSeqs[stream] = seqs
          for seq in seqs { checkpointAt[seq] = stream }
        } catch {
          failed(error, "table checkpoints: stream \(TerminalText.quoted(stream)) cannot be listed: \(error)")
        }
      }
      // A trimmed log's history begins at its horizon, from its bases.
      var expectedSeq = bases()
      // The head is the count of a sound log, and a fair guess at the rest.
      let total = progress == nil ? 0 : Int((try? reader.headSeq()) ?? 0)
      do {
        try reader.forEachRecord(from: 1) { seq, bytes in
          report.events += 1
          if let progress, report.events % UInt64(VerifyProgress.interval) == 0 {
            progress(VerifyProgress(stage: .events, done: Int(report.events), total: max(total, Int(report.events))))
          }
          if seq != expectedSeq {
            problem("seq \(expectedSeq)…\(seq - 1): missing from the log (gap before seq \(seq))")
            report.logIsIntact = false
          }
          expectedSeq = seq + 1
          let event: Event
          switch Result(catching: { () throws(EventRecord.DecodeError) -> Event in try EventRecord.decode(bytes) }) {
          case .success(let decoded) where decoded.seq == seq:
            event = decoded
            if let origin = event.origin {
              origins[origin.replica, default: [:]][origin.change, default: []].append(seq)
            }
            checkLimits(event)
          case .success(let decoded):
            damagedRecord(seq, "it holds seq \(decoded.seq)")
            return true
          case .failure(let error):
            damagedRecord(seq, "\(error)")
            return true
          }
          fold(event)
          return true
        }
      } catch {
        failed(error, "the log cannot be read past seq \(expectedSeq - 1): \(error)")
        report.logIsIntact = false
      }
      progress?(VerifyProgress(stage: .events, done: Int(report.events), total: Int(report.events)))
      lastSeq = expectedSeq - 1
    }

    /// Events lost at the log's end — the last records gone, the rows their
    /// writes left in the derived tables kept — leave no gap to see. Two
    /// tables still say those events were written: a stream's head names
    /// a later last seq, and the summary counts more events. Then the log
    /// itself is damaged: a rebuild from the events would drop those seqs
    /// (a removed item back in its list) and the next write would take
    /// them again (a crash-safety tester's repair did both). One table
    /// alone is taken for its own damage, which a rebuild mends.
    mutating func checkTail() {
      guard report.logIsIntact, let heads = try? reader.streamHeads(),
        let counted = (try? reader.summary())??.events, counted > report.events
      else { return }
      for head in heads where head.lastSeq > lastSeq {
        problem(
          "the log ends at seq \(lastSeq), but stream \(TerminalText.quoted(head.stream)) was written at seq "
            + "\(head.lastSeq) and the summary counts \(counted) events: the last events are missing")
        report.logIsIntact = false
      }
    }

    /// Names a record whose values no write may store (text past the
    /// limits, an origin out of range: written by an older msglog that let
    /// a replica's push through unchecked). It replays, so the derived
    /// tables are still checked against it.
    mutating func checkLimits(_ event: Event) {
      // An erased insert or edit holds no text by design: what it must
      // name instead is its erase (`Verifier+Erasure`); an unsign must
      // name an edit that says so.
      if event.erased != nil { return checkErasure(event) }
      if case .unsign = event.op { return checkErasure(event) }
      do {
        try Limits.checkStreamName(event.stream.text)
        try Limits.check(event.op, time: event.time, origin: event.origin)
      } catch {
        problem("seq \(event.seq): \(error) (no write may store this record)")
        pastLimits = true
      }
    }

    /// Names a damaged record, and stops checking the stream it belongs to.
    mutating func damagedRecord(_ seq: UInt64, _ reason: String) {
      problem("seq \(seq): corrupted record: \(reason)")
      report.logIsIntact = false
      // Whose event was it? The record cannot say; the event index can.
      if let owner = (try? streamsWithHeads())?.first(where: { stream in
        var found = false
        try? reader.forEachStreamEvent(of: stream, from: seq) {
          found = $0 == seq
          return false
        }
        return found
      }) {
        broken.insert(owner)
      } else {
        replayStopped = true
      }
    }

    mutating func fold(_ event: Event) {
      guard !replayStopped, !broken.contains(event.stream) else { return }
      do {
        // An undo is checked against the event it undoes, read again.
        let target = event.undoes.flatMap { try? reader.event(at: $0) }
        try state.apply(event, target: target)
      } catch {
        problem(
          "seq \(event.seq): \(error.reason) (stream \(TerminalText.quoted(event.stream)); its later events are not checked)"
        )
        broken.insert(event.stream)
        report.logIsIntact = false
        return
      }
      if let stream = checkpointAt.removeValue(forKey: event.seq) {
        let name = TerminalText.quoted(stream)
        guard stream == event.stream else {
          problem("table checkpoints: stream \(name) has one at seq \(event.seq), which is not its event")
          return
        }
        let replayed = state.projections[stream]
        do {
          let stored = try reader.checkpoint(of: stream, atOrBefore: event.seq)
          if stored?.seq != event.seq || stored?.version != replayed?.version
            || stored?.slots != replayed?.slots
          {
            problem("table checkpoints: stream \(name) at seq \(event.seq) differs from the replay")
          }
        } catch {
          failed(error, "table checkpoints: stream \(name) at seq \(event.seq): \(error)")
        }
      }
    }

    /// The streams named in `heads`, read as keys only (a damaged value must
    /// not hide its key: decoded, one junk row hid every stream's
    /// checkpoints, and `verify` blamed them). Falls back to the streams the
    /// log names.
    func streamsWithHeads() throws -> [StreamName] {
      (try? headNames.get().names) ?? Array(state.projections.keys).sorted()
    }

    /// A head row is a stream's with events: one for a stream the log never
    /// names is junk, named as such (the count of rows alone would not say
    /// which), as is a key that is not a stream name.
    mutating func checkHeadsNameStreams() {
      do {
        let heads = try headNames.get()
        for stream in heads.names where state.projections[stream] == nil {
          problem("table heads: stream \(TerminalText.quoted(stream)) has a head but no events")
        }
        if heads.notNames > 0 {
          let rows = heads.notNames == 1 ? "1 row's key is" : "\(heads.notNames) rows' keys are"
          problem("table heads: \(rows) not a stream name")
        }
      } catch {
        failed(error, "\(error)")
      }
    }

    // MARK: - Derived tables

    mutating func derivedTables() throws {
      for (seq, stream) in checkpointAt.sorted(by: { $0.key < $1.key }) {
        problem(
          "table checkpoints: stream \(TerminalText.quoted(stream)) has one at seq \(seq), which is not its event")
      }
      var totals = StreamTotals()
      for stream in state.projections.keys.sorted() where !broken.contains(stream) {
        checkStreamTables(stream, into: &totals)
      }
      checkHeadsNameStreams()
      checkIds(leafOf: totals.leafOf)
      checkCounts(nodes: totals.reachableNodes, checkpoints: totals.checkpoints)
    }

    /// What the streams' tables add up to, for the ids' and the counts' checks.
    struct StreamTotals {
      var reachableNodes: UInt64 = 0
      var checkpoints: UInt64 = 0
      /// Each live item's leaf, where its stream's tree could be walked.
      var leafOf: [ItemID: NodeID] = [:]
    }

    /// One stream's head, checkpoints, order tree and event index against its replay.
    mutating func checkStreamTables(_ stream: StreamName, into totals: inout StreamTotals) {
      let name = TerminalText.quoted(stream)
      let projection = state.projections[stream]!
      let head: StreamHead
      do {
        guard let found = try reader.streamHead(stream) else {
          problem("table heads: stream \(name) has events but no head")
          damagedTables.formUnion(["order", "checkpoints"])  // its rows cannot be counted
          return
        }
        head = found
      } catch {
        failed(error, "\(error)")
        damagedTables.formUnion(["order", "checkpoints"])
        return
      }
      let expected = state.counters(of: stream)!
      if head.counters != expected {
        problem(
          "table heads: stream \(name) has version \(head.version), last seq \(head.lastSeq), "
            + "count \(head.count); the log says \(expected[0]), \(expected[1]), \(expected[2])")
      }
      let seqs = checkpointSeqs[stream] ?? []
      totals.checkpoints += UInt64(seqs.count)
      checkCheckpointBookkeeping(head, seqs: seqs)
      let tree = StoredOrder.inspect(head, in: reader)
      totals.reachableNodes += UInt64(tree.nodes)
      for reason in tree.problems { problem("table order: stream \(name): \(reason)") }
      for (id, leaf) in tree.leafOf { totals.leafOf[id] = leaf }
      let replayed = projection.slots
      if tree.problems.isEmpty, tree.slots != replayed {
        let at =
          zip(tree.slots, replayed).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
          ?? min(tree.slots.count, replayed.count)
        problem("table order: stream \(name) differs from the replay from index \(at) on")
      }
      var indexed: [UInt64] = []
      do {
        try reader.forEachStreamEvent(of: stream, from: 1) {
          indexed.append($0)
          return true
        }
      } catch {
        failed(error, "\(error)")
        return
      }
      if indexed != state.streamSeqs[stream] ?? [] {
        problem(
          "table stream-events: stream \(name) lists \(indexed.count) events; the log has "
            + "\(state.streamSeqs[stream]?.count ?? 0)")
      }
    }

    /// The id index against the ids the log inserted (a live item's leaf as
    /// its stream's tree has it).
    mutating func checkIds(leafOf: [ItemID: NodeID]) {
      let ids = state.ids.sorted(by: { $0.value.insertSeq < $1.value.insertSeq })
      var stored: [ItemID: IdEntry] = [:]
      var chunkEnd = 0
      for (n, (id, var want)) in ids.enumerated() {
        if let progress, n % VerifyProgress.interval == 0 {
          progress(VerifyProgress(stage: .ids, done: n, total: ids.count))
        }
        // The rows of the next ids in one request (a round trip to a
        // server); a chunk with a damaged row is read row by row, so that
        // each damaged row is named.
        if n == chunkEnd {
          chunkEnd = min(n + Self.idChunk, ids.count)
          stored = (try? reader.idEntries(ids[n..<chunkEnd].map(\.key))) ?? [:]
        }
        do {
          guard let entry = try stored[id] ?? reader.idEntry(id) else {
            problem("table ids: \(id.text) is missing (inserted at seq \(want.insertSeq))")
            continue
          }
          // The leaf is known only where the stream's tree could be walked;
          // an item missing from its tree is that tree's problem, named above.
          want.leaf = want.removeSeq == 0 ? leafOf[id] ?? entry.leaf : 0
          if entry != want {
            func describe(_ e: IdEntry) -> String {
              "\(e.insertSeq), remove seq \(e.removeSeq), leaf \(e.leaf)"
                + (e.textSeq == 0 ? "" : ", text seq \(e.textSeq)")
            }
            problem("table ids: \(id.text) has insert seq \(describe(entry)); the log says \(describe(want))")
          }
        } catch {
          failed(error, "\(error)")
        }
      }
      progress?(VerifyProgress(stage: .ids, done: ids.count, total: ids.count))
    }

    /// The head's record of its latest checkpoint must match the checkpoints table.
    mutating func checkCheckpointBookkeeping(_ head: StreamHead, seqs: [UInt64]) {
      let name = TerminalText.quoted(head.stream)
      do {
        let latest = try seqs.last.flatMap { try reader.checkpoint(of: head.stream, atOrBefore: $0) }
        let version = latest?.version ?? 0
        let count = UInt64(latest?.slots.count ?? 0)
        if head.checkpointVersion != version || head.checkpointCount != count {
          problem(
            "table heads: stream \(name) records its last checkpoint at version \(head.checkpointVersion) "
              + "with \(head.checkpointCount) items; the checkpoints table says \(version) with \(count)")
        }
      } catch {
        failed(error, "table checkpoints: stream \(name): \(error)")
      }
    }

    /// How many id rows one request reads.
    static let idChunk = 4096

    /// Row counts against the summary and against what the replay needs:
    /// rows that nothing refers to are found here.
    mutating func checkCounts(nodes: UInt64, checkpoints: UInt64) {
      let expected = RecordedCounts(
        events: report.events, streams: UInt64(state.projections.count), ids: UInt64(state.ids.count), nodes: nodes,
        checkpoints: checkpoints)
      do {
        if let counts = try reader.rowCounts() {
          let rows: [(String, UInt64, UInt64)] = [
            ("heads", counts.heads, expected.streams), ("ids", counts.ids, expected.ids),
            ("order", counts.nodes, expected.nodes), ("checkpoints", counts.checkpoints, expected.checkpoints),
            ("stream-events", counts.streamEvents, expected.events),
          ]
          for (table, found, want) in rows where found != want && !damagedTables.contains(table) {
            problem("table \(table): \(found) rows; the log and the other tables account for \(want)")
          }
        }
        // An empty database has no summary yet. The summary counts the other
        // tables: checked on its own only when they are sound, and only in a
        // store that counts rows cheaply (the others keep none).
        let summary = try reader.summary()
        if damagedTables.isEmpty, try reader.tableCounts() != nil, summary ?? RecordedCounts() != expected {
          problem("table summary: \(summary.map(describe) ?? "missing"); the tables hold \(describe(expected))")
        }
      } catch {
        failed(error, "\(error)")
      }
    }

    func describe(_ s: RecordedCounts) -> String {
      "\(s.events) events, \(s.streams) streams, \(s.ids) ids, \(s.nodes) nodes, \(s.checkpoints) checkpoints"
    }
  }
}
