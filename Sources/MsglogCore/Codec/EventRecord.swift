#if canImport(Glibc)
  import Glibc
#endif

/// The on-disk form of an event: versioned, length-prefixed, checksummed.
///
/// Layout (all integers big-endian; documented for third-party readers in
/// docs/FORMAT.md — keep the two in step):
///
///     0   u8    record format version (1)
///     1   u8    op: 1 insert, 2 remove, 3 move
///     2   u64   seq (equals the key)
///     10  u64   stream version
///     18  i64   time, milliseconds since the Unix epoch, UTC
///     26  16B   item id (UUID bytes)
///     42  u16   stream name length N, then N bytes of UTF-8
///     op payload:
///       insert: u64 index, u8 has-sender (0/1), [u32 length + sender bytes],
///               u32 length + text bytes
///       remove: u64 index the item had (replay checks the id there)
///       move:   u64 from, u64 to
///     last 4 bytes: u32 CRC-32C of every preceding byte
package enum EventRecord {
  package static let formatVersion: UInt8 = 1
  static let opInsert: UInt8 = 1
  static let opRemove: UInt8 = 2
  static let opMove: UInt8 = 3
  static let headerSize = 44

  /// Why a record could not be decoded.
  package enum DecodeError: Error, Equatable, CustomStringConvertible, Sendable {
    case truncated
    case checksumMismatch(stored: UInt32, computed: UInt32)
    case unknownFormatVersion(UInt8)
    case unknownOp(UInt8)
    case invalidUTF8(field: String)
    case trailingBytes(Int)
    case invalidFlag(UInt8)

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
      }
    }
  }

  /// Encodes `event` into its record bytes.
  package static func encode(_ event: Event) -> [UInt8] {
    var out: [UInt8] = []
    let streamBytes = event.stream.bytes
    precondition(streamBytes.count <= Int(UInt16.max), "stream names are validated before encoding")
    out.reserveCapacity(headerSize + streamBytes.count + 32)
    out.append(formatVersion)
    switch event.op {
    case .insert: out.append(opInsert)
    case .remove: out.append(opRemove)
    case .move: out.append(opMove)
    }
    out.appendBigEndian(event.seq)
    out.appendBigEndian(event.version)
    out.appendBigEndian(UInt64(bitPattern: event.time.milliseconds))
    out.append(contentsOf: event.id.bytes)
    out.appendBigEndian(UInt16(streamBytes.count))
    out.append(contentsOf: streamBytes)
    switch event.op {
    case .insert(_, let index, let text, let sender):
      out.appendBigEndian(index)
      if let sender {
        out.append(1)
        out.appendBigEndian(UInt32(sender.utf8.count))
        out.append(contentsOf: sender.utf8)
      } else {
        out.append(0)
      }
      out.appendBigEndian(UInt32(text.utf8.count))
      out.append(contentsOf: text.utf8)
    case .remove(_, let index):
      out.appendBigEndian(index)
    case .move(_, let from, let to):
      out.appendBigEndian(from)
      out.appendBigEndian(to)
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
    let version = try reader.u8()
    guard version == formatVersion else { throw .unknownFormatVersion(version) }
    let opCode = try reader.u8()
    let seq = try reader.u64()
    let streamVersion = try reader.u64()
    let time = Timestamp(milliseconds: Int64(bitPattern: try reader.u64()))
    let id = try reader.uuid()
    let streamLength = Int(try reader.u16())
    let stream = StreamName(try reader.string(streamLength, field: "stream name"))
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
    default:
      throw .unknownOp(opCode)
    }
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    return Event(seq: seq, stream: stream, version: streamVersion, time: time, op: op)
  }

  package static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Event {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(DecodeError) -> Event in try decode(raw) }
    }
    return try result.get()
  }
}

extension EventRecord {
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
    var reader = try fields(of: bytes, verifyingChecksum: verifyingChecksum)
    guard try reader.u8() == formatVersion else { throw .unknownFormatVersion(bytes[0]) }
    guard try reader.u8() == opInsert else { throw .unknownOp(bytes[1]) }
    let seq = try reader.u64()
    _ = try reader.u64()
    let time = Timestamp(milliseconds: Int64(bitPattern: try reader.u64()))
    let id = try reader.uuid()
    _ = try reader.take(Int(try reader.u16()))
    _ = try reader.u64()
    let (sender, text) = try reader.insertBody()
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    return Item(id: id, text: text, sender: sender, time: time, seq: seq)
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
    let n = bytes.count
    guard n >= headerSize + 4 else { throw .truncated }
    let stored = bytes.loadBigEndian(fromByteOffset: n - 4, as: UInt32.self)
    let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[..<(n - 4)]))
    guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
    guard bytes[0] == formatVersion else { throw .unknownFormatVersion(bytes[0]) }
    let nameLength = Int(bytes.loadBigEndian(fromByteOffset: 42, as: UInt16.self))
    guard headerSize + nameLength + 4 <= n else { throw .truncated }
    guard nameLength == stream.count else { return nil }
    if nameLength > 0, memcmp(bytes.baseAddress! + headerSize, stream.baseAddress!, nameLength) != 0 { return nil }
    let seq = bytes.loadBigEndian(fromByteOffset: 2, as: UInt64.self)
    let version = bytes.loadBigEndian(fromByteOffset: 10, as: UInt64.self)
    let id = ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[26..<42]))
    let p = headerSize + nameLength
    let payload = n - 4 - p
    let change: PositionalEvent.Change
    switch bytes[1] {
    case opInsert:
      guard payload >= 13 else { throw .truncated }
      change = .insert(index: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self))
    case opRemove:
      guard payload == 8 else { throw payload < 8 ? .truncated : .trailingBytes(payload - 8) }
      change = .remove(index: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self))
    case opMove:
      guard payload == 16 else { throw payload < 16 ? .truncated : .trailingBytes(payload - 16) }
      change = .move(
        from: bytes.loadBigEndian(fromByteOffset: p, as: UInt64.self),
        to: bytes.loadBigEndian(fromByteOffset: p + 8, as: UInt64.self))
    default:
      throw .unknownOp(bytes[1])
    }
    return PositionalEvent(seq: seq, version: version, id: id, change: change)
  }
}
