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
    var broken: Set<String> = []
    var expectedSeq: UInt64 = 1
    var suppressed = 0
    func problem(_ text: String) {
      if report.problems.count < problemLimit { report.problems.append(text) } else { suppressed += 1 }
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
      }
      return true
    }
    report.logIsIntact = report.problems.isEmpty
    let projections = state.projections
    let ids = state.ids

    // Derived tables: each must equal what the replay built.
    let heads = try reader.streamHeads()
    var seen: Set<String> = []
    for head in heads {
      seen.insert(head.stream)
      let name = TerminalText.quoted(head.stream)
      guard let projection = projections[head.stream] else {
        problem("table heads: stream \(name) has a head but no events")
        continue
      }
      if broken.contains(head.stream) { continue }
      let expected = state.head(of: head.stream)!
      if head != expected {
        problem(
          "table heads: stream \(name) has version \(head.version), last seq \(head.lastSeq), "
            + "count \(head.count); the log says \(expected.version), \(expected.lastSeq), \(expected.count)")
      }
      let order = try reader.order(of: head.stream)
      let replayed = projection.ids
      if order != replayed {
        let at =
          zip(order, replayed).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset
          ?? min(order.count, replayed.count)
        problem("table order: stream \(name) differs from the replay from index \(at) on")
      }
    }
    for stream in projections.keys.sorted() where !seen.contains(stream) {
      problem("table heads: stream \(TerminalText.quoted(stream)) has events but no head")
    }
    var indexed = 0
    try reader.forEachIdEntry { id, entry in
      indexed += 1
      if ids[id] != entry {
        let want = ids[id].map { "insert seq \($0.insertSeq), remove seq \($0.removeSeq)" } ?? "no entry"
        problem(
          "table ids: \(id.text) has insert seq \(entry.insertSeq), remove seq \(entry.removeSeq); the log says \(want)"
        )
      }
    }
    if indexed != ids.count {
      problem("table ids: \(indexed) entries; the log inserted \(ids.count) ids")
    }
    if suppressed > 0 { report.problems.append("… and \(suppressed) more problems") }
    report.streams = projections.count
    report.liveItems = projections.values.reduce(0) { $0 + $1.count }
    return report
  }
}
