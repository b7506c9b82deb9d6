#if canImport(Glibc)
  import Glibc
#endif

/// The on-disk form of an event: versioned, length-prefixed, checksummed.
///
/// Layout (all integers big-endian; documented for third-party readers in
/// docs/FORMAT.md — keep the two in step):
///
///     0   u8    record format version: 1, or 2 for an edit, a restore and
///               any event that undoes another
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
///
/// A log without edits, restores and undos is all format 1, byte for byte
/// what msglog wrote before they existed; format 3 is for the events a
/// replica's changes became (sync), and only for them.
package enum EventRecord {
  package static let formatVersion: UInt8 = 1
  /// The format of the records of working together (edit, restore, `undoes`).
  package static let formatVersion2: UInt8 = 2
  /// The format of the events made from a replica's changes: format 2 and
  /// their origin.
  package static let formatVersion3: UInt8 = 3
  /// The bytes of format 3 after the op's fields: `undoes`, then the origin.
  static let format3Tail = 8 + 16 + 8 + 8
  static let opInsert: UInt8 = 1
  static let opRemove: UInt8 = 2
  static let opMove: UInt8 = 3
  static let opEdit: UInt8 = 4
  static let opRestore: UInt8 = 5
  static let headerSize = 44
  /// The longest record the limits allow: an edit with the longest stream
  /// name, sender and text, and an origin. A pulled frame claiming more is
  /// refused before it is read.
  package static let maxSize =
    headerSize + Limits.maxStreamNameBytes + 3 * 8 + 1 + 4 + Limits.maxSenderBytes + 4 + Limits.maxTextBytes
    + format3Tail + 4

  /// Why a record could not be decoded.
  package enum DecodeError: Error, Equatable, CustomStringConvertible, Sendable {
    case truncated
    case checksumMismatch(stored: UInt32, computed: UInt32)
    case unknownFormatVersion(UInt8)
    case unknownOp(UInt8)
    case invalidUTF8(field: String)
    case trailingBytes(Int)
    case invalidFlag(UInt8)
    /// A format 2 record of an event that format 1 holds (it undoes nothing).
    case needlessFormat
    /// A format 3 record whose origin is not one (change 0).
    case invalidOrigin

    package var description: String {
      switch self {
      case .truncated: return "record is truncated"
      case .checksumMismatch(let stored, let computed):
        return "checksum mismatch (stored 0x\(Hex.text(stored, width: 8)), computed 0x\(Hex.text(computed, width: 8)))"
      case .unknownFormatVersion(let v): return "unknown record format version \(v)"
      case .unknownOp(let op): return "unknown op code \(op)"
      case .invalidUTF8(let field): return "\(field) is not valid UTF-8"
      case .trailingBytes(let n): return "\(n) unexpected bytes after the fields"
      case .invalidFlag(let f): return "invalid sender flag \(f)"
      case .needlessFormat: return "record format 2 for an event that undoes nothing"
      case .invalidOrigin: return "record format 3 with change number 0"
      }
    }
  }

  /// The record format `event` is written in.
  package static func format(of event: Event) -> UInt8 {
    if event.origin != nil { return formatVersion3 }
    switch event.op {
    case .edit, .restore: return formatVersion2
    case .insert, .remove, .move: return event.undoes == nil ? formatVersion : formatVersion2
    }
  }

  /// Encodes `event` into its record bytes.
  package static func encode(_ event: Event) -> [UInt8] {
    var out: [UInt8] = []
    let streamBytes = event.stream.bytes
    precondition(streamBytes.count <= Int(UInt16.max), "stream names are validated before encoding")
    out.reserveCapacity(headerSize + streamBytes.count + 32)
    let format = format(of: event)
    out.append(format)
    switch event.op {
    case .insert: out.append(opInsert)
    case .remove: out.append(opRemove)
    case .move: out.append(opMove)
    case .edit: out.append(opEdit)
    case .restore: out.append(opRestore)
    }
    out.appendBigEndian(event.seq)
    out.appendBigEndian(event.version)
    out.appendBigEndian(UInt64(bitPattern: event.time.milliseconds))
    out.append(contentsOf: event.id.bytes)
    out.appendBigEndian(UInt16(streamBytes.count))
    out.append(contentsOf: streamBytes)
    func appendBody(sender: String?, text: String) {
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
    switch event.op {
    case .insert(_, let index, let text, let sender):
      out.appendBigEndian(index)
      appendBody(sender: sender, text: text)
    case .remove(_, let index):
      out.appendBigEndian(index)
    case .move(_, let from, let to):
      out.appendBigEndian(from)
      out.appendBigEndian(to)
    case .edit(_, let text, let sender, let index, let replaces, let inserted):
      out.appendBigEndian(index)
      out.appendBigEndian(replaces)
      out.appendBigEndian(inserted)
      appendBody(sender: sender, text: text)
    case .restore(_, let index, let textSeq):
      out.appendBigEndian(index)
      out.appendBigEndian(textSeq)
    }
    if format >= formatVersion2 { out.appendBigEndian(event.undoes ?? 0) }
    if let origin = event.origin {
      out.append(contentsOf: origin.replica.bytes)
      out.appendBigEndian(origin.change)
      out.appendBigEndian(UInt64(bitPattern: origin.made.milliseconds))
    }
    out.appendBigEndian(CRC32C.checksum(out))
    return out
  }

  /// Decodes record bytes, checking the checksum first.
  ///
  /// - Warning: `bytes` may point into an LMDB page; nothing returned refers
  ///   to it, so the caller may end the transaction afterwards.
  package static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Event {
    try decode(bytes, verifyingChecksum: true)
  }

  /// Decodes, skipping the checksum only when the caller has just verified
  /// these very bytes (replay's second pass, in the same transaction).
  package static func decode(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> Event {
    var reader = try fields(of: bytes, verifyingChecksum: verifyingChecksum)
    let format = try reader.u8()
    guard isKnown(format) else { throw .unknownFormatVersion(format) }
    let opCode = try reader.u8()
    let seq = try reader.u64()
    let streamVersion = try reader.u64()
    let time = Timestamp(milliseconds: Int64(bitPattern: try reader.u64()))
    let id = try reader.uuid()
    let streamLength = Int(try reader.u16())
    let stream = StreamName(try reader.string(streamLength, field: "stream name"))
    // Format 2 ends with the seq it undoes, format 3 with that and the
    // origin: the op's fields end before them.
    if format >= formatVersion2 { try reader.reserveTail(tail(of: format)) }
    let op: Event.Op
    switch opCode {
    case opInsert:
      let index = try reader.u64()
      let (sender, text) = try reader.insertBody()
      op = .insert(id: id, index: index, text: text, sender: sender)
    case opRemove:
      op = .remove(id: id, index: try reader.u64())
    case opMove:
      let from = try reader.u64()
      let to = try reader.u64()
      op = .move(id: id, from: from, to: to)
    case opEdit where format >= formatVersion2:
      let index = try reader.u64()
      let replaces = try reader.u64()
      let inserted = try reader.u64()
      let (sender, text) = try reader.insertBody()
      op = .edit(id: id, text: text, sender: sender, index: index, replaces: replaces, inserted: inserted)
    case opRestore where format >= formatVersion2:
      let index = try reader.u64()
      op = .restore(id: id, index: index, textSeq: try reader.u64())
    default:
      throw .unknownOp(opCode)
    }
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    var undoes: UInt64? = nil
    var origin: Origin? = nil
    if format >= formatVersion2 {
      reader.releaseTail()
      let seq = try reader.u64()
      undoes = seq == 0 ? nil : seq
    }
    if format == formatVersion3 {
      let replica = try reader.uuid()
      let change = try reader.u64()
      guard change > 0 else { throw .invalidOrigin }
      origin = Origin(replica: replica, change: change, made: Timestamp(milliseconds: Int64(bitPattern: try reader.u64())))
    }
    let event = Event(
      seq: seq, stream: stream, version: streamVersion, time: time, op: op, undoes: undoes, origin: origin)
    // One event, one record: format 2 only where format 1 cannot hold it.
    guard self.format(of: event) == format else { throw .needlessFormat }
    return event
  }

  package static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Event {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(DecodeError) -> Event in try decode(raw) }
    }
    return try result.get()
  }
}

extension EventRecord {
  /// Whether this msglog reads records of `format`.
  @inline(__always)
  static func isKnown(_ format: UInt8) -> Bool { format >= formatVersion && format <= formatVersion3 }

  /// The bytes after the op's fields in a record of `format` (2 or 3).
  @inline(__always)
  static func tail(of format: UInt8) -> Int { format == formatVersion3 ? format3Tail : 8 }

  /// A reader over the record's fields, after checking its length and, unless
  /// the caller has just checked these very bytes, its checksum.
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

extension EventRecord {
  /// The item an insert record creates, without making an `Event`.
  ///
  /// - Parameter verifyingChecksum: false only when the caller checked these
  ///   very bytes in the same transaction (a full replay's single pass);
  ///   every other path must check, or damage would reach the output.
  package static func insertedItem(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> Item
  {
    guard case .insert(let item) = try textRecord(bytes, verifyingChecksum: verifyingChecksum) else {
      throw .unknownOp(bytes[1])
    }
    return item
  }

  /// What a text record holds (the record a slot of a stream's order names):
  /// an insert's whole item, or an edit's text, time and the insert it edits.
  package enum TextRecord: Equatable, Sendable {
    case insert(Item)
    case edit(id: ItemID, text: String, time: Timestamp, inserted: UInt64)

    package var id: ItemID {
      switch self {
      case .insert(let item): return item.id
      case .edit(let id, _, _, _): return id
      }
    }

    package var text: String {
      switch self {
      case .insert(let item): return item.text
      case .edit(_, let text, _, _): return text
      }
    }
  }

  /// Reads an insert or an edit record without making an `Event`; any other
  /// op is `unknownOp` (no slot names one).
  package static func textRecord(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError)
    -> TextRecord
  {
    var reader = try fields(of: bytes, verifyingChecksum: verifyingChecksum)
    let format = try reader.u8()
    guard isKnown(format) else { throw .unknownFormatVersion(format) }
    let op = try reader.u8()
    guard op == opInsert || (op == opEdit && format >= formatVersion2) else { throw .unknownOp(op) }
    let seq = try reader.u64()
    _ = try reader.u64()
    let time = Timestamp(milliseconds: Int64(bitPattern: try reader.u64()))
    let id = try reader.uuid()
    _ = try reader.take(Int(try reader.u16()))
    if format >= formatVersion2 { try reader.reserveTail(tail(of: format)) }
    if op == opInsert {
      _ = try reader.u64()
      let (sender, text) = try reader.insertBody()
      guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
      return .insert(Item(id: id, text: text, sender: sender, time: time, seq: seq))
    }
    _ = try reader.u64()
    _ = try reader.u64()
    let inserted = try reader.u64()
    let (_, text) = try reader.insertBody()
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    return .edit(id: id, text: text, time: time, inserted: inserted)
  }

  /// Checks a record and reads only what replay needs: nil when it belongs
  /// to another stream than `stream` (UTF-8 bytes of its name), else its
  /// positional effect. No string is made; the text is not decoded.
  ///
  /// The checksum is checked for every record, of every stream: a damaged
  /// stream name must not make an event silently disappear from a replay.
  @inline(__always)
  package static func positional(_ bytes: UnsafeRawBufferPointer, ifStream stream: UnsafeRawBufferPointer)
    throws(DecodeError) -> PositionalEvent?
  {
    let nameLength = try checkedNameLength(bytes)
    guard nameLength == stream.count else { return nil }
    if nameLength > 0, memcmp(bytes.baseAddress! + headerSize, stream.baseAddress!, nameLength) != 0 { return nil }
    return try positionalFields(bytes, nameLength: nameLength)
  }

  /// The positional effect of a record of any stream, its checksum checked.
  package static func positional(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> PositionalEvent {
    try positionalFields(bytes, nameLength: checkedNameLength(bytes))
  }

  /// The length of a record's stream name, once its checksum, format and
  /// length are checked.
  @inline(__always)
  private static func checkedNameLength(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Int {
    let n = bytes.count
    guard n >= headerSize + 4 else { throw .truncated }
    let stored = bytes.loadBigEndian(fromByteOffset: n - 4, as: UInt32.self)
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[..<(n - 4)]))
    guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
    let format = bytes[0]
    guard isKnown(format) else { throw .unknownFormatVersion(format) }
    let nameLength = Int(bytes.loadBigEndian(fromByteOffset: 42, as: UInt16.self))
    guard headerSize + nameLength + 4 <= n else { throw .truncated }
    return nameLength
  }

  /// The op's positions, after the header (checked by the caller).
  @inline(__always)
  static func positionalFields(_ bytes: UnsafeRawBufferPointer, nameLength: Int) throws(DecodeError)
    -> PositionalEvent
  {
    let n = bytes.count
    let seq = bytes.loadBigEndian(fromByteOffset: 2, as: UInt64.self)
    let version = bytes.loadBigEndian(fromByteOffset: 10, as: UInt64.self)
    let id = ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[26..<42]))
    let p = headerSize + nameLength
    var payload = n - 4 - p
    var undoes: UInt64 = 0
    let format = bytes[0]
    if format >= formatVersion2 {
      let tail = tail(of: format)
      guard payload >= tail else { throw .truncated }
      payload -= tail
      undoes = bytes.loadBigEndian(fromByteOffset: n - 4 - tail, as: UInt64.self)
      if format == formatVersion3, bytes.loadBigEndian(fromByteOffset: n - 20, as: UInt64.self) == 0 {
        throw .invalidOrigin
      }
    }
    func exactly(_ size: Int) throws(DecodeError) {
      guard payload == size else { throw payload < size ? .truncated : .trailingBytes(payload - size) }
    }
    let change: PositionalEvent.Change
    switch bytes[1] {
    case opInsert:
      guard payload >= 13 else { throw .truncated }
      change = .insert(index: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self))
    case opRemove:
      try exactly(8)
      change = .remove(index: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self))
    case opMove:
      try exactly(16)
      change = .move(
        from: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self),
        to: bytes.loadBigEndian(fromByteOffset: p + 8, as: UInt64.self))
    case opEdit where format >= formatVersion2:
      guard payload >= 29 else { throw .truncated }
      change = .edit(
        index: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self),
        replaces: bytes.loadBigEndian(fromByteOffset: p + 8, as: UInt64.self))
    case opRestore where format >= formatVersion2:
      try exactly(16)
      change = .restore(
        index: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self),
        textSeq: bytes.loadBigEndian(fromByteOffset: p + 8, as: UInt64.self))
    default:
      throw .unknownOp(bytes[1])
    }
    if format == formatVersion2, undoes == 0, bytes[1] <= opMove { throw .needlessFormat }
    return PositionalEvent(seq: seq, version: version, id: id, change: change, undoes: undoes)
  }
}
