/// The byte layout of the derived tables' rows, shared by every store.
///
/// Each row ends with a CRC-32C computed over a tag for its table, its key
/// and its value, so that a flipped bit, a truncated row, or a value moved
/// to another key (or table) is caught when the row is read, before anything
/// is computed from it. All integers are big-endian.
package enum DerivedRows {
  /// Which table a row belongs to: the first byte the checksum covers.
  package enum Table: UInt8, Sendable, CustomStringConvertible {
    case heads = 1
    case order = 2
    case ids = 3
    case checkpoints = 4
    case summary = 5
    // Sync's tables (`SyncRows`): a log's id and, as a remote, its
    // replicas' progress; a replica's own state, pending changes, the
    // outcomes it learned and the refusals it keeps.
    case log = 6
    case replicas = 7
    case syncOutcomes = 8
    case replica = 9
    case pending = 10
    case learned = 11
    case refused = 12
    /// A replica's kept local view (`SavedLocalView`).
    case localView = 13
    /// Named tokens (`TokenRows`): id → the token's row.
    case tokens = 14
    /// A trimmed log's horizon and each stream's base (`TrimmedHistory`).
    case horizon = 15
    case base = 16

    package var description: String {
      switch self {
      case .heads: return "heads"
      case .order: return "order"
      case .ids: return "ids"
      case .checkpoints: return "checkpoints"
      case .summary: return "summary"
      case .log: return "meta (log)"
      case .replicas: return "replicas"
      case .syncOutcomes: return "sync-outcomes"
      case .replica: return "meta (replica)"
      case .pending: return "pending"
      case .learned: return "outcomes"
      case .refused: return "refused"
      case .localView: return "meta (local view)"
      case .tokens: return "tokens"
      case .horizon: return "meta (horizon)"
      case .base: return "meta (base)"
      }
    }
  }

  // MARK: - Keys (the bytes the checksum covers; LMDB uses them as keys too)

  package static func headKey(_ stream: StreamName) -> [UInt8] { stream.bytes }

  package static func nodeKey(_ stream: StreamName, _ node: NodeID) -> [UInt8] { streamKey(stream, node) }

  package static func checkpointKey(_ stream: StreamName, _ seq: UInt64) -> [UInt8] { streamKey(stream, seq) }

  /// A stream name, a 0 byte (names hold no control characters) and a big-endian u64.
  package static func streamKey(_ stream: StreamName, _ n: UInt64) -> [UInt8] {
    var key = stream.bytes
    key.reserveCapacity(key.count + 9)
    key.append(0)
    key.appendBigEndian(n)
    return key
  }

  // MARK: - Stream heads: 7 × u64

  package static func encode(_ head: StreamHead) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(60)
    for n in [
      head.version, head.lastSeq, head.count, head.root, head.nextNode, head.checkpointVersion, head.checkpointCount,
    ] {
      out.appendBigEndian(n)
    }
    return seal(.heads, key: headKey(head.stream), out)
  }

  package static func decodeHead(stream: StreamName, _ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> StreamHead
  {
    var r = try open(.heads, stream: stream, row, subject: .head(stream))
    let head = StreamHead(
      stream: stream, version: try r.u64(), lastSeq: try r.u64(), count: try r.u64(), root: try r.u64(),
      nextNode: try r.u64(), checkpointVersion: try r.u64(), checkpointCount: try r.u64())
    try r.end()
    return head
  }

  // MARK: - Order tree nodes

  /// u8 is-leaf, u64 parent, u32 n, then n × (16-byte id, u64 seq) in a leaf
  /// or n × (u64 child, u64 count) in an inner node.
  package static func encode(_ node: TreeNode<Slot>, id: NodeID, of stream: StreamName) -> [UInt8] {
    var out: [UInt8] = [node.isLeaf ? 1 : 0]
    out.reserveCapacity(17 + node.width * 24)
    out.appendBigEndian(node.parent)
    out.appendBigEndian(UInt32(node.width))
    if node.isLeaf {
      for slot in node.elements { append(slot, to: &out) }
    } else {
      for (child, count) in zip(node.children, node.counts) {
        out.appendBigEndian(child)
        out.appendBigEndian(UInt64(count))
      }
    }
    return seal(.order, key: nodeKey(stream, id), out)
  }

  package static func decodeNode(_ id: NodeID, of stream: StreamName, _ row: UnsafeRawBufferPointer)
    throws(DerivedDamage) -> TreeNode<Slot>
  {
    let what = Subject.node(id, stream)
    var r = try open(.order, stream: stream, suffix: id, row, subject: what)
    let kind = try r.u8()
    guard kind <= 1 else { throw DerivedDamage(.order, "\(what) has kind \(kind)") }
    let parent = try r.u64()
    let n = Int(try r.u32())
    var node = TreeNode<Slot>(parent: parent, isLeaf: kind == 1)
    guard r.remaining == n * (node.isLeaf ? 24 : 16) else {
      throw DerivedDamage(.order, "\(what) says it holds \(n) entries in \(r.remaining) bytes")
    }
    if node.isLeaf {
      node.elements.reserveCapacity(n)
      for _ in 0..<n { node.elements.append(Slot(id: try r.uuid(), seq: try r.u64())) }
    } else {
      node.children.reserveCapacity(n)
      node.counts.reserveCapacity(n)
      for _ in 0..<n {
        node.children.append(try r.u64())
        let count = try r.u64()
        guard count <= UInt64(Int.max) else { throw DerivedDamage(.order, "\(what) has a count of \(count)") }
        node.counts.append(Int(count))
      }
    }
    return node
  }

  /// The slots of leaf `id`, appended to `slots` straight from its row
  /// (no node is made): its checksum checked, a node that is not a leaf
  /// refused as `decodeNode` would.
  package static func appendLeafSlots(
    _ id: NodeID, of stream: StreamName, _ row: UnsafeRawBufferPointer, to slots: inout [Slot]
  ) throws(DerivedDamage) {
    let what = Subject.node(id, stream)
    var r = try open(.order, stream: stream, suffix: id, row, subject: what)
    let kind = try r.u8()
    guard kind == 1 else {
      if kind == 0 { throw StoredOrder.missingLeaf(id, of: stream) }
      throw DerivedDamage(.order, "\(what) has kind \(kind)")
    }
    _ = try r.u64()
    let n = Int(try r.u32())
    guard r.remaining == n * 24 else {
      throw DerivedDamage(.order, "\(what) says it holds \(n) entries in \(r.remaining) bytes")
    }
    let base = r.bytes.baseAddress! + r.offset
    for k in 0..<n {
      let entry = UnsafeRawBufferPointer(start: base + 24 * k, count: 24)
      slots.append(
        Slot(
          id: ItemID(bytes: UnsafeRawBufferPointer(rebasing: entry[0..<16])),
          seq: entry.loadBigEndian(fromByteOffset: 16, as: UInt64.self)))
    }
  }

  // MARK: - Id index: 3 × u64, a 4th for a removed item whose text came from an edit

  package static func encode(_ entry: IdEntry, for id: ItemID) -> [UInt8] {
    withUnsafeEncoded(entry, for: id) { Array($0) }
  }

  /// `encode(_:for:)`'s row, lent to `body` from the stack: an import
  /// writes one of these an item, where an array each (an allocation,
  /// and an append of bytes at about a hundred instructions a field) was
  /// a twentieth of its work. Sealed keyed by the id where it lies.
  ///
  /// - Warning: the buffer is valid only during the call.
  package static func withUnsafeEncoded<R>(
    _ entry: IdEntry, for id: ItemID, _ body: (UnsafeRawBufferPointer) throws -> R
  ) rethrows -> R {
    let fields = entry.textSeq != 0 ? 4 : 3
    return try withUnsafeTemporaryAllocation(byteCount: 4 * 8 + 4, alignment: 8) { row in
      row.storeBytes(of: entry.insertSeq.bigEndian, toByteOffset: 0, as: UInt64.self)
      row.storeBytes(of: entry.removeSeq.bigEndian, toByteOffset: 8, as: UInt64.self)
      row.storeBytes(of: entry.leaf.bigEndian, toByteOffset: 16, as: UInt64.self)
      if fields == 4 { row.storeBytes(of: entry.textSeq.bigEndian, toByteOffset: 24, as: UInt64.self) }
      let crc = id.withUnsafeBytes { checksum(.ids, key: $0, UnsafeRawBufferPointer(rebasing: row[..<(fields * 8)])) }
      row.storeBytes(of: crc.bigEndian, toByteOffset: fields * 8, as: UInt32.self)
      return try body(UnsafeRawBufferPointer(rebasing: row[..<(fields * 8 + 4)]))
    }
  }

  package static func decodeIdEntry(_ id: ItemID, _ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> IdEntry {
    var r = try open(.ids, row, subject: .entry(id)) { crc in id.withUnsafeBytes { CRC32C.update(crc, $0) } }
    var entry = IdEntry(insertSeq: try r.u64(), removeSeq: try r.u64(), leaf: try r.u64())
    if r.remaining > 0 {
      entry.textSeq = try r.u64()
      guard entry.textSeq != 0 else { throw DerivedDamage(.ids, "the entry of \(id.text) has a text seq of 0") }
    }
    try r.end()
    return entry
  }

  // MARK: - Checkpoints: u64 version, then (16-byte id, u64 seq) per item

  package static func encode(_ checkpoint: Checkpoint) -> [UInt8] {
    encodeCheckpoint(
      stream: checkpoint.stream, seq: checkpoint.seq, version: checkpoint.version, count: checkpoint.slots.count
    ) { add in
      for slot in checkpoint.slots { add(slot) }
    }
  }

  /// `encode(_:)` of the checkpoint of `stream` at `seq` whose `count`
  /// slots `forEachSlot` hands out in order, written straight into the
  /// row and sealed in place: a million items' checkpoint is 24 MB, with
  /// no array of its slots beside it nor a sealed copy.
  package static func encodeCheckpoint(
    stream: StreamName, seq: UInt64, version: UInt64, count: Int,
    _ forEachSlot: (_ add: (Slot) -> Void) throws -> Void
  ) rethrows -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(12 + count * 24)
    out.appendBigEndian(version)
    try forEachSlot { append($0, to: &out) }
    let sum = out.withUnsafeBytes { checksum(.checkpoints, key: checkpointKey(stream, seq), $0) }
    out.appendBigEndian(sum)
    return out
  }

  package static func decodeCheckpoint(stream: StreamName, seq: UInt64, _ row: UnsafeRawBufferPointer)
    throws(DerivedDamage) -> Checkpoint
  {
    let what = Subject.checkpoint(stream, seq)
    var r = try open(.checkpoints, stream: stream, suffix: seq, row, subject: what)
    let version = try r.u64()
    guard r.remaining % 24 == 0 else { throw DerivedDamage(.checkpoints, "\(what) has a partial entry") }
    var slots: [Slot] = []
    slots.reserveCapacity(r.remaining / 24)
    while r.remaining > 0 { slots.append(Slot(id: try r.uuid(), seq: try r.u64())) }
    return Checkpoint(stream: stream, seq: seq, version: version, slots: slots)
  }

  // MARK: - Summary: 6 × u64

  package static func encode(_ summary: RecordedCounts) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(52)
    for n in [summary.events, summary.streams, summary.ids, summary.nodes, summary.checkpoints] {
      out.appendBigEndian(n)
    }
    return seal(.summary, key: [], out)
  }

  package static func decodeSummary(_ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> RecordedCounts {
    var r = try open(.summary, key: [], row, what: "the summary")
    let summary = RecordedCounts(
      events: try r.u64(), streams: try r.u64(), ids: try r.u64(), nodes: try r.u64(), checkpoints: try r.u64())
    try r.end()
    return summary
  }

  // MARK: - Checksums

  static func checksum(_ table: Table, key: [UInt8], _ body: UnsafeRawBufferPointer) -> UInt32 {
    key.withUnsafeBytes { checksum(table, key: $0, body) }
  }

  static func checksum(_ table: Table, key: UnsafeRawBufferPointer, _ body: UnsafeRawBufferPointer) -> UInt32 {
    let crc = withUnsafeBytes(of: table.rawValue) { CRC32C.update(0, $0) }
    return CRC32C.update(CRC32C.update(crc, key), body)
  }

  /// The row: `body`, then its checksum (`consuming`: the body's buffer
  /// is the row's, not copied).
  package static func seal(_ table: Table, key: [UInt8], _ body: consuming [UInt8]) -> [UInt8] {
    var out = body
    key.withUnsafeBytes { seal(table, key: $0, &out) }
    return out
  }

  /// Appends its checksum to `row`, a row's value so far, keyed by `key`
  /// where it lies.
  static func seal(_ table: Table, key: UnsafeRawBufferPointer, _ row: inout [UInt8]) {
    let crc = row.withUnsafeBytes { checksum(table, key: key, $0) }
    row.appendBigEndian(crc)
  }

  /// Checks the row's checksum and returns a reader over its value.
  static func open(_ table: Table, key: [UInt8], _ row: UnsafeRawBufferPointer, what: String)
    throws(DerivedDamage) -> RowReader
  {
    try open(table, row, subject: .named(what)) { crc in key.withUnsafeBytes { CRC32C.update(crc, $0) } }
  }

  /// The same for a row keyed by a stream's name, and a 0 byte and a u64
  /// after it when `suffix` is given (`streamKey`): no key is made, the
  /// checksum reads the name where it lies.
  @inline(__always)
  static func open(
    _ table: Table, stream: StreamName, suffix: UInt64? = nil, _ row: UnsafeRawBufferPointer, subject: Subject
  ) throws(DerivedDamage) -> RowReader {
    try open(table, row, subject: subject) { crc in
      var crc = stream.withBytes { CRC32C.update(crc, $0) }
      if var suffix {
        suffix = suffix.bigEndian
        crc = withUnsafeBytes(of: (UInt8(0), suffix)) {
          CRC32C.update(crc, UnsafeRawBufferPointer(rebasing: $0[0..<1]))
        }
        crc = withUnsafeBytes(of: &suffix) { CRC32C.update(crc, $0) }
      }
      return crc
    }
  }

  @inline(__always)
  static func open(
    _ table: Table, _ row: UnsafeRawBufferPointer, subject: Subject, key: (UInt32) -> UInt32
  ) throws(DerivedDamage) -> RowReader {
    guard row.count >= 4 else { throw DerivedDamage(table, "\(subject) is truncated (\(row.count) bytes)") }
    let body = UnsafeRawBufferPointer(rebasing: row[..<(row.count - 4)])
    let stored = row.loadBigEndian(fromByteOffset: row.count - 4, as: UInt32.self)
    let crc = key(withUnsafeBytes(of: table.rawValue) { CRC32C.update(0, $0) })
    guard stored == CRC32C.update(crc, body) else {
      throw DerivedDamage(table, "\(subject) fails its checksum")
    }
    return RowReader(bytes: body, table: table, subject: subject)
  }

  /// What a row holds, put in words only when it is damaged: a decoder
  /// that made its message for every row it read cost more than the row.
  package enum Subject: CustomStringConvertible, Sendable {
    case head(StreamName)
    case node(NodeID, StreamName)
    case entry(ItemID)
    case checkpoint(StreamName, UInt64)
    case named(String)

    package var description: String {
      switch self {
      case .head(let stream): return "the head of stream \(TerminalText.quoted(stream))"
      case .node(let id, let stream): return "node \(id) of stream \(TerminalText.quoted(stream))"
      case .entry(let id): return "the entry of \(id.text)"
      case .checkpoint(let stream, let seq):
        return "the checkpoint of stream \(TerminalText.quoted(stream)) at seq \(seq)"
      case .named(let what): return what
      }
    }
  }

  static func append(_ slot: Slot, to out: inout [UInt8]) {
    // One append of the 24 bytes, made on the stack: an append costs about
    // a hundred instructions whatever its length, and a checkpoint holds a
    // slot for every item.
    withUnsafeTemporaryAllocation(byteCount: 24, alignment: 8) { bytes in
      slot.id.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: bytes[..<16]).copyMemory(from: $0) }
      bytes.storeBytes(of: slot.seq.bigEndian, toByteOffset: 16, as: UInt64.self)
      out.append(contentsOf: UnsafeRawBufferPointer(bytes))
    }
  }

  /// Reads a row's fields front to back; a short or long row is damage.
  struct RowReader {
    let bytes: UnsafeRawBufferPointer
    let table: Table
    let subject: Subject
    var offset = 0

    var what: String { subject.description }

    var remaining: Int { bytes.count - offset }

    mutating func integer<T: FixedWidthInteger>() throws(DerivedDamage) -> T {
      let n = MemoryLayout<T>.size
      guard n <= remaining else { throw DerivedDamage(table, "\(what) is truncated") }
      defer { offset += n }
      return bytes.loadBigEndian(fromByteOffset: offset, as: T.self)
    }

    mutating func u8() throws(DerivedDamage) -> UInt8 { try integer() }
    mutating func u32() throws(DerivedDamage) -> UInt32 { try integer() }
    mutating func u64() throws(DerivedDamage) -> UInt64 { try integer() }

    mutating func uuid() throws(DerivedDamage) -> ItemID {
      guard remaining >= 16 else { throw DerivedDamage(table, "\(what) is truncated") }
      defer { offset += 16 }
      return ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 16)]))
    }

    mutating func take(_ n: Int) throws(DerivedDamage) -> UnsafeRawBufferPointer {
      guard n >= 0, n <= remaining else { throw DerivedDamage(table, "\(what) is truncated") }
      defer { offset += n }
      return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
    }

    mutating func text() throws(DerivedDamage) -> String {
      let raw = try take(Int(try u32()))
      guard let text = String(validating: raw, as: UTF8.self) else {
        throw DerivedDamage(table, "\(what) holds text that is not UTF-8")
      }
      return text
    }

    /// What is left, as bytes.
    mutating func rest() -> [UInt8] {
      defer { offset = bytes.count }
      return Array(bytes[offset...])
    }

    func end() throws(DerivedDamage) {
      guard remaining == 0 else { throw DerivedDamage(table, "\(what) has \(remaining) unexpected bytes") }
    }
  }
}
