import MsglogCore

/// A trimmed log's bases, as `export` writes them (docs/FORMAT.md, "Base
/// lines").
extension LogSnapshot {
  /// One stream's list just before the log's horizon: its items with, for
  /// an edited one, the seq of the edit that holds its text (what a later
  /// edit names as the text it replaces).
  package struct ExportedBase {
    package var stream: StreamName
    /// The seq before the horizon, and the stream's version there.
    package var seq: UInt64
    package var version: UInt64
    package var items: [Item]
    package var textSeqs: [UInt64?]
  }

  /// The bases in the names' bytewise order (only `stream`'s when given):
  /// none for a log never trimmed.
  package func exportedBases(stream: StreamName? = nil) throws -> [ExportedBase] {
    try translated {
      let horizon = try base.horizon()
      guard horizon.isTrimmed else { return [] }
      return try base.bases().filter { stream == nil || $0.stream == stream }.map { found in
        let items = try Replay.items(found.slots, in: base)
        return ExportedBase(
          stream: found.stream, seq: horizon.seq - 1, version: found.version, items: items,
          textSeqs: zip(found.slots, items).map { slot, item in slot.seq == item.seq ? nil : slot.seq })
      }
    }
  }
}
