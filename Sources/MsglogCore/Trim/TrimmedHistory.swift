/// What `msglog trim` leaves of the history before its horizon
/// (docs/REFERENCE.md, "Forgetting on purpose"): the seq history now begins
/// at, and each stream's list just before it, its **base**.
///
/// Trimming keeps seqs and versions: nothing is renumbered. The events
/// below the horizon are gone but for the records a base still reads (the
/// text of each item live at the horizon, and each stream's last event
/// before it, which its head names); those stay under their seqs, out of
/// every walk of the log, read only by seq. The rows here are not derived
/// data: a rebuild of the derived tables (`verify --repair`) starts from
/// the bases, as a replay of a trimmed log does.
package struct Horizon: Equatable, Sendable {
  /// The first seq whose event is kept: history begins here, and the
  /// lists as of `seq - 1` are the bases.
  package var seq: UInt64
  /// Records of seqs below `seq` that the store no longer holds, and rows
  /// of the per-stream event index likewise: the row counts a trimmed
  /// log lacks (`TableCounts` adds them back, so the counts still match
  /// the head).
  package var droppedEvents: UInt64
  package var droppedStreamEvents: UInt64

  package init(seq: UInt64, droppedEvents: UInt64, droppedStreamEvents: UInt64) {
    self.seq = seq
    self.droppedEvents = droppedEvents
    self.droppedStreamEvents = droppedStreamEvents
  }

  /// An untrimmed log: history begins at seq 1.
  package static let none = Horizon(seq: 1, droppedEvents: 0, droppedStreamEvents: 0)

  package var isTrimmed: Bool { seq > 1 }

  /// Refuses a point in history (a list after `seq`) the log no longer
  /// has: below the bases, at `self.seq - 1`.
  package func check(listAfter seq: UInt64) throws(MsglogError) {
    if seq + 1 < self.seq { throw .historyTrimmed(horizon: self.seq) }
  }

  package static let key = Array("horizon".utf8)

  package func encoded() -> [UInt8] {
    var out: [UInt8] = []
    for n in [seq, droppedEvents, droppedStreamEvents] { out.appendBigEndian(n) }
    return DerivedRows.seal(.horizon, key: Self.key, out)
  }

  package static func decode(_ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> Horizon {
    var r = try DerivedRows.open(.horizon, key: key, row, what: "the horizon")
    let horizon = Horizon(seq: try r.u64(), droppedEvents: try r.u64(), droppedStreamEvents: try r.u64())
    try r.end()
    return horizon
  }
}

/// A stream's list just before the horizon: where its replays begin. It
/// is a checkpoint kept on purpose — `seq` is the stream's last event
/// before the horizon (a seq of its own, as a checkpoint's is), `version`
/// its version there, `slots` its items in order with the seq of each
/// one's text record — and is kept twice: in `checkpoints`, where replays
/// find it, and as a row of its own, which a rebuild of the derived
/// tables does not clear.
package typealias StreamBase = Checkpoint

extension StreamBase {
  /// `base/` and the stream's name: every base sorts under the prefix.
  package static let baseKeyPrefix = Array("base/".utf8)

  package static func baseKey(_ stream: StreamName) -> [UInt8] { baseKeyPrefix + stream.bytes }

  /// u64 seq, u64 version, then (16-byte id, u64 seq) per item; sealed.
  /// With items retired (`RetiredItem`): u64 all ones (no seq is), u64
  /// seq, u64 version, u64 items, the items, then (16-byte id, u64
  /// insert seq, u64 remove seq) per retired item.
  package func encodedAsBase(retiring retired: [RetiredItem] = []) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(36 + slots.count * 24 + retired.count * 32)
    if !retired.isEmpty { out.appendBigEndian(Self.retiringMark) }
    out.appendBigEndian(seq)
    out.appendBigEndian(version)
    if !retired.isEmpty { out.appendBigEndian(UInt64(slots.count)) }
    for slot in slots {
      slot.id.withUnsafeBytes { out.append(contentsOf: $0) }
      out.appendBigEndian(slot.seq)
    }
    for item in retired {
      item.id.withUnsafeBytes { out.append(contentsOf: $0) }
      out.appendBigEndian(item.insertSeq)
      out.appendBigEndian(item.removeSeq)
    }
    return DerivedRows.seal(.base, key: Self.baseKey(stream), out)
  }

  /// What a base row with retired items begins with.
  static let retiringMark = UInt64.max

  /// A base row: the base, and the items of its stream it retired.
  package static func decodeBaseRow(stream: StreamName, _ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> (
    base: StreamBase, retired: [RetiredItem]
  ) {
    let what = "the base of stream \(TerminalText.quoted(stream))"
    var r = try DerivedRows.open(.base, key: baseKey(stream), row, what: what)
    var seq = try r.u64()
    let retiring = seq == retiringMark
    if retiring { seq = try r.u64() }
    let version = try r.u64()
    var count = r.remaining / 24
    if retiring {
      let listed = try r.u64()
      guard listed <= UInt64(r.remaining / 24) else { throw DerivedDamage(.base, "\(what) is cut short") }
      count = Int(listed)
    } else {
      guard r.remaining % 24 == 0 else { throw DerivedDamage(.base, "\(what) has a partial entry") }
    }
    var slots: [Slot] = []
    slots.reserveCapacity(count)
    for _ in 0..<count { slots.append(Slot(id: try r.uuid(), seq: try r.u64())) }
    guard r.remaining % 32 == 0 else { throw DerivedDamage(.base, "\(what) has a partial retired item") }
    var retired: [RetiredItem] = []
    while r.remaining > 0 {
      retired.append(RetiredItem(stream: stream, id: try r.uuid(), insertSeq: try r.u64(), removeSeq: try r.u64()))
    }
    return (StreamBase(stream: stream, seq: seq, version: version, slots: slots), retired)
  }
}

/// An item removed before a trim's horizon: nothing of it is left but its
/// id, which stays used — a UUID is inserted at most once, ever — so its
/// id entry is kept, and, as the derived tables cannot be rebuilt with it
/// from what is left, its stream's base row names it.
package struct RetiredItem: Equatable, Sendable {
  package var stream: StreamName
  package var id: ItemID
  package var insertSeq: UInt64
  package var removeSeq: UInt64

  package init(stream: StreamName, id: ItemID, insertSeq: UInt64, removeSeq: UInt64) {
    self.stream = stream
    self.id = id
    self.insertSeq = insertSeq
    self.removeSeq = removeSeq
  }

  /// Its id entry, as a trim leaves it and a rebuild makes it.
  package var entry: IdEntry { IdEntry(insertSeq: insertSeq, removeSeq: removeSeq) }
}

extension RetiredItem {
  /// `retired` by the stream whose base row names each; a stream without
  /// a base (no msglog trims so) is a damaged plan.
  package static func byBase(_ retired: [RetiredItem], of bases: [StreamBase]) throws(MsglogError) -> [StreamName:
    [RetiredItem]]
  {
    var by: [StreamName: [RetiredItem]] = [:]
    let streams = Set(bases.map(\.stream))
    for item in retired {
      guard streams.contains(item.stream) else {
        throw .corruptedLog(
          "item \(item.id.text) of stream \(TerminalText.quoted(item.stream)) was removed before the horizon, and that stream has no base"
        )
      }
      by[item.stream, default: []].append(item)
    }
    return by
  }
}
