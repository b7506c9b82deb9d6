/// Checks a whole store: every record, seq contiguity, the replay, and every
/// derived table against what the replay says it must hold.
public enum Verifier {
  public struct Report: Equatable, Sendable {
    public var events: UInt64 = 0
    public var streams = 0
    public var liveItems = 0
    /// One line per problem, each naming the seq or table concerned.
    public var problems: [String] = []
    /// Whether every event record is sound, so that any problem is in the
    /// derived tables alone and `verify --repair` can mend it.
    public var logIsIntact = true

    public var isClean: Bool { problems.isEmpty }
  }

  /// How many problems to name before summarising the rest.
  static let problemLimit = 100

  public static func verify(_ reader: any LogReader) throws -> Report {
    var report = Report()
    var state = DerivedState()
    var broken: Set<StreamName> = []
    var expectedSeq: UInt64 = 1
    var suppressed = 0
    func problem(_ text: String) {
      if report.problems.count < problemLimit { report.problems.append(text) } else { suppressed += 1 }
    }
    // Checkpoints are checked when the fold reaches their seq.
    let heads = try reader.streamHeads()
    var checkpointAt: [UInt64: StreamName] = [:]
    for head in heads {
      for seq in try reader.checkpointSeqs(of: head.stream) { checkpointAt[seq] = head.stream }
    }

    try reader.forEachRecord(from: 1) { seq, bytes in
      report.events += 1
      if seq != expectedSeq {
        problem("seq \(expectedSeq)…\(seq - 1): missing from the log (gap before seq \(seq))")
      }
      expectedSeq = seq + 1
      let event: Event
      switch Result(catching: { () throws(EventRecord.DecodeError) -> Event in try EventRecord.decode(bytes) }) {
      case .success(let decoded) where decoded.seq == seq:
        event = decoded
      case .success(let decoded):
        problem("seq \(seq): corrupted record: it holds seq \(decoded.seq)")
        return true
      case .failure(let error):
        problem("seq \(seq): corrupted record: \(error)")
        return true
      }
      if broken.contains(event.stream) { return true }
      do {
        try state.apply(event)
      } catch let error as ReplayError {
        problem(
          "seq \(seq): \(error.reason) (stream \(TerminalText.quoted(event.stream)); its later events are not checked)")
        broken.insert(event.stream)
        return true
      }
      if let stream = checkpointAt.removeValue(forKey: seq) {
        let replayed = state.projections[stream]
        let stored = try reader.checkpoint(of: stream, atOrBefore: seq)
        if stream != event.stream || stored?.version != replayed?.version
          || stored?.slots != replayed?.slots.elements
        {
          problem("table checkpoints: stream \(TerminalText.quoted(stream)) at seq \(seq) differs from the replay")
        }
      }
      return true
    }
    report.logIsIntact = report.problems.isEmpty
    for (seq, stream) in checkpointAt.sorted(by: { $0.key < $1.key }) {
      problem("table checkpoints: stream \(TerminalText.quoted(stream)) has one at seq \(seq), which is not its event")
    }

    // Derived tables: each must equal what the replay built.
    var seen: Set<StreamName> = []
    var leafOf: [ItemID: NodeID] = [:]
    for head in heads {
      seen.insert(head.stream)
      let name = TerminalText.quoted(head.stream)
      guard let projection = state.projections[head.stream], let expected = state.counters(of: head.stream) else {
        problem("table heads: stream \(name) has a head but no events")
        continue
      }
      if broken.contains(head.stream) { continue }
      if head.counters != expected {
        problem(
          "table heads: stream \(name) has version \(head.version), last seq \(head.lastSeq), "
            + "count \(head.count); the log says \(expected[0]), \(expected[1]), \(expected[2])")
      }
      var stored: [Slot] = []
      do {
        let tree = StoredOrder.tree(StoredNodes(reader: reader, stream: head.stream), head: head)
        try tree.forEachLeaf { leaf, slots in
          for slot in slots { leafOf[slot.id] = leaf }
          stored.append(contentsOf: slots)
          return true
        }
      } catch {
        problem("table order: stream \(name) cannot be read: \(error)")
      }
      let replayed = projection.slots.elements
      if stored != replayed {
        let at =
          zip(stored, replayed).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
          ?? min(stored.count, replayed.count)
        problem("table order: stream \(name) differs from the replay from index \(at) on")
      }
      var indexed: [UInt64] = []
      try reader.forEachStreamEvent(of: head.stream, from: 1) {
        indexed.append($0)
        return true
      }
      if indexed != state.streamSeqs[head.stream] ?? [] {
        problem(
          "table stream-events: stream \(name) lists \(indexed.count) events; the log has \(state.streamSeqs[head.stream]?.count ?? 0)"
        )
      }
    }
    for stream in state.projections.keys.sorted() where !seen.contains(stream) {
      problem("table heads: stream \(TerminalText.quoted(stream)) has events but no head")
    }
    var indexed = 0
    try reader.forEachIdEntry(from: []) { id, entry in
      indexed += 1
      guard var want = state.ids[id] else {
        problem("table ids: \(id.text) is indexed, but the log never inserted it")
        return true
      }
      want.leaf = want.removeSeq == 0 ? leafOf[id] ?? 0 : 0
      if entry != want {
        problem(
          "table ids: \(id.text) has insert seq \(entry.insertSeq), remove seq \(entry.removeSeq), leaf \(entry.leaf); "
            + "the log says \(want.insertSeq), \(want.removeSeq), leaf \(want.leaf)")
      }
      return true
    }
    if indexed != state.ids.count {
      problem("table ids: \(indexed) entries; the log inserted \(state.ids.count) ids")
    }
    if suppressed > 0 { report.problems.append("… and \(suppressed) more problems") }
    report.streams = state.projections.count
    report.liveItems = state.projections.values.reduce(0) { $0 + $1.count }
    return report
  }
}
