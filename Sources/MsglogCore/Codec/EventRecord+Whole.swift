/// Record formats 1 to 3: one checksum over the whole record.
///
/// Layout (all integers big-endian; docs/FORMAT.md, "Event record"):
///
///     0   u8    record format version: 1, or 2 for an edit, a restore and
///               any event that undoes another, 3 for an event with an origin
///     1   u8    op: 1 insert, 2 remove, 3 move, 4 edit, 5 restore (4, 5: format 2)
///     2   u64   seq (equals the key)
///     10  u64   stream version
///     18  i64   time, milliseconds since the Unix epoch, UTC
///     26  16B   item id (UUID bytes)
///     42  u16   stream name length N, then N bytes of UTF-8
///     op payload:
///       insert:  u64 index, u8 has-sender (0/1), [u32 length + sender bytes],
///                u32 length + text bytes
///       remove:  u64 index the item had (replay checks the id there)
///       move:    u64 from, u64 to
///       edit:    u64 index the item had, u64 seq of the text record it
///                replaces, u64 seq of its insert, then sender and text as
///                an insert's (the sender is who edited)
///       restore: u64 index, u64 seq of the text record it comes back with
///     format 2 and 3: u64 seq of the event it undoes (0: none)
///     format 3: the origin — 16B replica id, u64 change, i64 made (ms)
///     last 4 bytes: u32 CRC-32C of every preceding byte
extension EventRecord {
  /// The bytes of format 3 after the op's fields: `undoes`, then the origin.
  static let format3Tail = 8 + 16 + 8 + 8
  static let headerSize = 44

  static func encodeWhole(_ event: Event, into out: inout [UInt8]) {
    let streamBytes = event.stream.bytes
    precondition(streamBytes.count <= Int(UInt16.max), "stream names are validated before encoding")
    out.reserveCapacity(headerSize + streamBytes.count + 32)
    let format = format(of: event, in: .whole)
    out.append(format)
    out.append(opCode(event.op))
    out.appendBigEndian(event.seq)
    out.appendBigEndian(event.version)
    out.appendBigEndian(UInt64(bitPattern: event.time.milliseconds))
    out.append(contentsOf: event.id.bytes)
    out.appendBigEndian(UInt16(streamBytes.count))
    out.append(contentsOf: streamBytes)
    appendOpFields(event.op, to: &out)
    switch event.op {
    case .insert(_, _, let text, let sender), .edit(_, let text, let sender, _, _, _):
      appendBody(sender: sender, text: text, to: &out)
    case .remove, .move, .restore, .erase, .unsign: break
    }
    if format >= formatVersion2 { out.appendBigEndian(event.undoes ?? 0) }
    if let origin = event.origin { appendOrigin(origin, to: &out) }
    out.appendBigEndian(CRC32C.checksum(out))
  }

  static func opCode(_ op: Event.Op) -> UInt8 {
    switch op {
    case .insert: return opInsert
    case .remove: return opRemove
    case .move: return opMove
    case .edit: return opEdit
    case .restore: return opRestore
    case .erase: return opErase
    case .unsign: return opUnsign
    }
  }

  /// The op's positions (never its sender or text), as both layouts hold them.
  static func appendOpFields(_ op: Event.Op, to out: inout [UInt8]) {
    let offset = out.count
    out.appendZeros(count: opFieldsSize(opCode(op))!)
    out.withUnsafeMutableBytes {
      var w = RecordWriter($0.baseAddress! + offset)
      writeOpFields(op, to: &w)
    }
  }

  /// `appendOpFields` through a writer (`encodeFramed`).
  @inline(__always)
  static func writeOpFields(_ op: Event.Op, to w: inout RecordWriter) {
    switch op {
    case .insert(_, let index, _, _), .remove(_, let index): w.bigEndian(index)
    case .move(_, let from, let to):
      w.bigEndian(from)
      w.bigEndian(to)
    case .edit(_, _, _, let index, let replaces, let inserted):
      w.bigEndian(index)
      w.bigEndian(replaces)
      w.bigEndian(inserted)
    case .restore(_, let index, let textSeq):
      w.bigEndian(index)
      w.bigEndian(textSeq)
    case .erase(_, let index): w.bigEndian(index ?? EventRecord.notLive)
    case .unsign(_, let edit): w.bigEndian(edit)
    }
  }

  /// An insert's or an edit's sender flag, sender and text.
  static func appendBody(sender: String?, text: String, to out: inout [UInt8]) {
    if let sender {
      out.append(1)
      out.appendBigEndian(UInt32(sender.utf8.count))
      out.append(contentsOf: sender.utf8)
    } else {
      out.append(0)
    }
    out.appendBigEndian(UInt32(text.utf8.count))
    out.append(contentsOf: text.utf8)
  }

  static func appendOrigin(_ origin: Origin, to out: inout [UInt8]) {
    let offset = out.count
    out.appendZeros(count: EventRecord.originSize)
    out.withUnsafeMutableBytes {
      var w = RecordWriter($0.baseAddress! + offset)
      writeOrigin(origin, to: &w)
    }
  }

  /// `appendOrigin` through a writer (`encodeFramed`).
  @inline(__always)
  static func writeOrigin(_ origin: Origin, to w: inout RecordWriter) {
    origin.replica.bytes.withUnsafeBytes { w.bytes($0) }
    w.bigEndian(origin.change)
    w.bigEndian(UInt64(bitPattern: origin.made.milliseconds))
  }

  static func decodeWhole(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> Event {
    var reader = try fields(of: bytes, verifyingChecksum: verifyingChecksum)
    let format = try reader.u8()
    guard isKnown(format), format < formatVersion4 else { throw .unknownFormatVersion(format) }
    let opCode = try reader.u8()
    // An erase and an unsign are only ever framed (record formats 5 and 6).
    guard opCode != EventRecord.opErase, opCode != EventRecord.opUnsign else { throw .unknownOp(opCode) }
    let seq = try reader.u64()
    let streamVersion = try reader.u64()
    let time = Timestamp(milliseconds: Int64(bitPattern: try reader.u64()))
    let id = try reader.uuid()
    let streamLength = Int(try reader.u16())
    let stream = StreamName(try reader.string(streamLength, field: "stream name"))
    // Format 2 ends with the seq it undoes, format 3 with that and the
    // origin: the op's fields end before them.
    if format >= formatVersion2 { try reader.reserveTail(tail(of: format)) }
    let op = try reader.op(opCode, id: id, allowsWorkingTogether: format >= formatVersion2) {
      reader throws(DecodeError) in
      try reader.insertBody()
    }
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    var undoes: UInt64? = nil
    var origin: Origin? = nil
    if format >= formatVersion2 {
      reader.releaseTail()
      let seq = try reader.u64()
      undoes = seq == 0 ? nil : seq
    }
    if format == formatVersion3 { origin = try reader.origin() }
    let event = Event(
      seq: seq, stream: stream, version: streamVersion, time: time, op: op, undoes: undoes, origin: origin)
    // One event, one record: format 2 only where format 1 cannot hold it.
    guard self.format(of: event, in: .whole) == format else { throw .needlessFormat }
    return event
  }

  /// The bytes after the op's fields in a record of `format` (2 or 3).
  @inline(__always)
  static func tail(of format: UInt8) -> Int { format == formatVersion3 ? format3Tail : 8 }

  /// A reader over a whole record's fields, after checking its length and,
  /// unless the caller has just checked these very bytes, its checksum.
  static func fields(of bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> ByteReader {
    guard bytes.count >= headerSize + 4 else { throw .truncated }
    let body = UnsafeRawBufferPointer(rebasing: bytes[..<(bytes.count - 4)])
    if verifyingChecksum {
      let stored = bytes.loadBigEndian(fromByteOffset: bytes.count - 4, as: UInt32.self)
      let computed = CRC32C.checksum(body)
      guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
    }
    return ByteReader(body)
  }
}

extension ByteReader {
  /// The op `code`'s fields, its body read by `body` (where each layout
  /// keeps it).
  mutating func op(
    _ code: UInt8, id: ItemID, allowsWorkingTogether: Bool,
    body: (inout ByteReader) throws(EventRecord.DecodeError) -> (sender: String?, text: String)
  ) throws(EventRecord.DecodeError) -> Event.Op {
    switch code {
    case EventRecord.opInsert:
      let index = try u64()
      let (sender, text) = try body(&self)
      return .insert(id: id, index: index, text: text, sender: sender)
    case EventRecord.opRemove:
      return .remove(id: id, index: try u64())
    case EventRecord.opMove:
      let from = try u64()
      let to = try u64()
      return .move(id: id, from: from, to: to)
    case EventRecord.opEdit where allowsWorkingTogether:
      let index = try u64()
      let replaces = try u64()
      let inserted = try u64()
      let (sender, text) = try body(&self)
      return .edit(id: id, text: text, sender: sender, index: index, replaces: replaces, inserted: inserted)
    case EventRecord.opRestore where allowsWorkingTogether:
      let index = try u64()
      return .restore(id: id, index: index, textSeq: try u64())
    case EventRecord.opErase where allowsWorkingTogether:
      let index = try u64()
      return .erase(id: id, index: index == EventRecord.notLive ? nil : index)
    case EventRecord.opUnsign where allowsWorkingTogether:
      return .unsign(id: id, edit: try u64())
    default:
      throw .unknownOp(code)
    }
  }

  /// A replica's id, its change (from 1) and the replica's clock.
  mutating func origin() throws(EventRecord.DecodeError) -> Origin {
    let replica = try uuid()
    let change = try u64()
    guard change > 0 else { throw .invalidOrigin }
    return Origin(replica: replica, change: change, made: Timestamp(milliseconds: Int64(bitPattern: try u64())))
  }
}
