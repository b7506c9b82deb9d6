import MsglogCore

/// A trimmed log's bases, as `export` writes them and a replica starts
/// from (docs/FORMAT.md, "A trimmed log").
extension LogSnapshot {
  /// The bases in the names' bytewise order (only `stream`'s when given),
  /// each at the seq before the horizon: its items with, for an edited one,
  /// the seq of the edit that holds its text (what a later edit names as
  /// the text it replaces). None for a log never trimmed.
  package func exportedBases(stream: StreamName? = nil) throws -> [ImportedBase] {
    try translated {
      let horizon = try base.horizon()
      guard horizon.isTrimmed else { return [] }
      let retired = Dictionary(grouping: try base.retiredItems(), by: \.stream)
      return try base.bases().filter { stream == nil || $0.stream == stream }.map { found in
        let items = try Replay.items(found.slots, in: base)
        return ImportedBase(
          stream: found.stream, seq: horizon.seq - 1, version: found.version, items: items,
          textSeqs: zip(found.slots, items).map { slot, item in slot.seq == item.seq ? nil : slot.seq },
          retired: retired[found.stream] ?? [])
      }
    }
  }

  /// The records below the horizon a trimmed log kept for its bases, in
  /// seq order: each live item's insert and, for an edited one, the edit
  /// holding its text. What `erase --sender` reads besides the events from
  /// the horizon on (a base's item may be the sender's, or its text theirs).
  package func keptTextRecords() throws -> [Event] {
    try translated {
      guard try base.horizon().isTrimmed else { return [] }
      var seqs: Set<UInt64> = []
      var kept: [Event] = []
      for found in try base.bases() {
        for slot in found.slots {
          guard seqs.insert(slot.seq).inserted, let event = try base.event(at: slot.seq) else { continue }
          kept.append(event)
          if case .edit(_, _, _, _, _, let inserted) = event.op, seqs.insert(inserted).inserted,
            let insert = try base.event(at: inserted)
          {
            kept.append(insert)
          }
        }
      }
      return kept.sorted { $0.seq < $1.seq }
    }
  }
}
