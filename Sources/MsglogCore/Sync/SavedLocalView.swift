/// A replica's local view as the last local write left it, kept in the
/// replica (`meta` `local-view`) so that a read costs what it costs on any
/// log instead of performing every pending change again (docs/SYNC.md).
///
/// It is derived, never the truth: it holds what `LocalView` computed from
/// the replica's events and pending changes — the overlay's records and
/// rows and which change became which event — stamped with what it was
/// computed from (the replica's head, its next change number, how many
/// changes pend). A view whose stamp no longer matches (a pull, a sync, a
/// change settled or refused, an older msglog's write) is ignored and the
/// view computed again; a `verify` checks a matching one against a fresh
/// computation. Performing is deterministic (each change's event is dated
/// when it was made), so a kept view and a computed one are the same.
///
/// Layout, big-endian, the whole sealed like a derived row (table
/// `localView`, key `local-view`): the stamp (3 × u64), then u32-counted
/// lists of records (u32 length, bytes), heads, nodes (or their deletion),
/// id entries (each as its derived row, sealed itself), each stream's
/// appended seqs, the (change, seq) pairs of the applied changes and the
/// items whose latest change is pending.
package struct SavedLocalView {
  package struct Stamp: Equatable {
    package var baseHead: UInt64
    package var nextChange: UInt64
    package var pendingCount: UInt64

    package init(baseHead: UInt64, nextChange: UInt64, pendingCount: UInt64) {
      (self.baseHead, self.nextChange, self.pendingCount) = (baseHead, nextChange, pendingCount)
    }

    /// What `base` holds now, to compare a kept view's stamp with.
    package init(of base: any ReplicaStateReader, state: ReplicaState) throws {
      self.init(
        baseHead: try base.headSeq(), nextChange: state.nextChange, pendingCount: try base.pendingChangeCount())
    }
  }

  package var stamp: Stamp
  package var contents: OverlayWriter.Contents
  /// Each applied pending change's local seq.
  package var seqOfChange: [UInt64: UInt64]
  /// The items whose latest change is pending.
  package var pendingItems: Set<ItemID>

  package init(
    stamp: Stamp, contents: OverlayWriter.Contents, seqOfChange: [UInt64: UInt64], pendingItems: Set<ItemID>
  ) {
    (self.stamp, self.contents, self.seqOfChange, self.pendingItems) = (stamp, contents, seqOfChange, pendingItems)
  }

  // MARK: - Encoding (in key order, so the same view is the same bytes)

  package func encoded() -> [UInt8] {
    var out: [UInt8] = []
    for n in [stamp.baseHead, stamp.nextChange, stamp.pendingCount] { out.appendBigEndian(n) }
    out.appendBigEndian(UInt32(contents.records.count))
    for record in contents.records { Self.appendBlob(record, to: &out) }
    let heads = contents.heads.values.sorted { $0.stream < $1.stream }
    out.appendBigEndian(UInt32(heads.count))
    for head in heads {
      Self.appendBlob(head.stream.bytes, to: &out)
      Self.appendBlob(DerivedRows.encode(head), to: &out)
    }
    let nodes = contents.nodes.flatMap { stream, nodes in nodes.map { (stream, $0.key, $0.value) } }
      .sorted { ($0.0, $0.1) < ($1.0, $1.1) }
    out.appendBigEndian(UInt32(nodes.count))
    for (stream, id, node) in nodes {
      Self.appendBlob(stream.bytes, to: &out)
      out.appendBigEndian(id)
      guard let node else {
        out.append(0)
        continue
      }
      out.append(1)
      Self.appendBlob(DerivedRows.encode(node, id: id, of: stream), to: &out)
    }
    let ids = contents.ids.sorted { ItemID.precedesInStorageOrder($0.key, $1.key) }
    out.appendBigEndian(UInt32(ids.count))
    for (id, entry) in ids {
      out.append(contentsOf: id.bytes)
      Self.appendBlob(DerivedRows.encode(entry, for: id), to: &out)
    }
    let streams = contents.streamEvents.sorted { $0.key < $1.key }
    out.appendBigEndian(UInt32(streams.count))
    for (stream, seqs) in streams {
      Self.appendBlob(stream.bytes, to: &out)
      out.appendBigEndian(UInt32(seqs.count))
      for seq in seqs { out.appendBigEndian(seq) }
    }
    let applied = seqOfChange.sorted { $0.key < $1.key }
    out.appendBigEndian(UInt32(applied.count))
    for (change, seq) in applied {
      out.appendBigEndian(change)
      out.appendBigEndian(seq)
    }
    let items = pendingItems.sorted(by: ItemID.precedesInStorageOrder)
    out.appendBigEndian(UInt32(items.count))
    for item in items { out.append(contentsOf: item.bytes) }
    return DerivedRows.seal(.localView, key: SyncRows.localViewKey, out)
  }

  private static func appendBlob(_ bytes: [UInt8], to out: inout [UInt8]) {
    out.appendBigEndian(UInt32(bytes.count))
    out.append(contentsOf: bytes)
  }

  // MARK: - Decoding

  /// The view kept in `row`; throws `DerivedDamage` for one that does not decode.
  package init(decoding row: UnsafeRawBufferPointer) throws(DerivedDamage) {
    var r = try DerivedRows.open(.localView, key: SyncRows.localViewKey, row, what: "the kept local view")
    stamp = Stamp(baseHead: try r.u64(), nextChange: try r.u64(), pendingCount: try r.u64())
    contents = OverlayWriter.Contents()
    for _ in 0..<(try r.u32()) { contents.records.append(Array(try Self.blob(&r))) }
    for _ in 0..<(try r.u32()) {
      let stream = try Self.stream(&r)
      contents.heads[stream] = try DerivedRows.decodeHead(stream: stream, try Self.blob(&r))
    }
    for _ in 0..<(try r.u32()) {
      let stream = try Self.stream(&r)
      let id = try r.u64()
      switch try r.u8() {
      case 0: contents.nodes[stream, default: [:]][id] = .some(nil)
      case 1: contents.nodes[stream, default: [:]][id] = .some(try DerivedRows.decodeNode(id, of: stream, try Self.blob(&r)))
      case let flag: throw DerivedDamage(.localView, "a node of the kept local view has flag \(flag)")
      }
    }
    for _ in 0..<(try r.u32()) {
      let id = try r.uuid()
      contents.ids[id] = try DerivedRows.decodeIdEntry(id, try Self.blob(&r))
    }
    for _ in 0..<(try r.u32()) {
      let stream = try Self.stream(&r)
      var seqs: [UInt64] = []
      for _ in 0..<(try r.u32()) { seqs.append(try r.u64()) }
      contents.streamEvents[stream] = seqs
    }
    seqOfChange = [:]
    for _ in 0..<(try r.u32()) { seqOfChange[try r.u64()] = try r.u64() }
    pendingItems = []
    for _ in 0..<(try r.u32()) { pendingItems.insert(try r.uuid()) }
    guard r.remaining == 0 else { throw DerivedDamage(.localView, "the kept local view has \(r.remaining) bytes more") }
  }

  private static func blob(_ r: inout DerivedRows.RowReader) throws(DerivedDamage) -> UnsafeRawBufferPointer {
    try r.take(Int(try r.u32()))
  }

  private static func stream(_ r: inout DerivedRows.RowReader) throws(DerivedDamage) -> StreamName {
    StreamName(String(decoding: try blob(&r), as: UTF8.self))
  }
}
