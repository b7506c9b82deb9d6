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
      return try base.bases().filter { stream == nil || $0.stream == stream }.map { found in
        let items = try Replay.items(found.slots, in: base)
        return ImportedBase(
          stream: found.stream, seq: horizon.seq - 1, version: found.version, items: items,
          textSeqs: zip(found.slots, items).map { slot, item in slot.seq == item.seq ? nil : slot.seq })
      }
    }
  }
}
