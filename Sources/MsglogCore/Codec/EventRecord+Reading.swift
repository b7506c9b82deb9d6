#if canImport(Glibc)
  import Glibc
#endif

/// What replay and the readers of the current list take from a record
/// without making an `Event`: its positions, or its text.
extension EventRecord {
  /// The item an insert record creates, without making an `Event`.
  ///
  /// - Parameter verifyingChecksum: false only when the caller checked these
  ///   very bytes in the same transaction (a full replay's single pass);
  ///   every other path must check, or damage would reach the output. A
  ///   framed record's body is checked either way (a scan checks frames).
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
    guard let format = bytes.first else { throw .truncated }
    if isFramed(format) {
      let frame = try frame(of: bytes, verifyingChecksum: verifyingChecksum)
      guard frame.hasBody else { throw .unknownOp(frame.op) }
      let seq = bytes.loadBigEndian(fromByteOffset: 3, as: UInt64.self)
      let time = Timestamp(milliseconds: bytes.loadBigEndian(fromByteOffset: 19, as: Int64.self))
      let id = ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[27..<43]))
      let (sender, text, erased) = try framedBody(bytes, frame: frame)
      if frame.op == opInsert {
        var item = Item(id: id, text: text, sender: sender, time: time, seq: seq)
        item.erased = erased
        return .insert(item)
      }
      let inserted = bytes.loadBigEndian(fromByteOffset: framedHeaderSize + frame.nameLength + 16, as: UInt64.self)
      return .edit(id: id, text: text, time: time, inserted: inserted)
    }
    var reader = try fields(of: bytes, verifyingChecksum: verifyingChecksum)
    guard isKnown(format) else { throw .unknownFormatVersion(format) }
    _ = try reader.u8()
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
  /// (A framed record's frame: its body is checked where its text is read.)
  @inline(__always)
  package static func positional(_ bytes: UnsafeRawBufferPointer, ifStream stream: UnsafeRawBufferPointer)
    throws(DecodeError) -> PositionalEvent?
  {
    if let first = bytes.first, isFramed(first) {
      let frame = try frame(of: bytes, verifyingChecksum: true)
      guard frame.nameLength == stream.count,
        sameBytes(bytes.baseAddress! + framedHeaderSize, stream.baseAddress, count: frame.nameLength)
      else { return nil }
      return try framedPositional(bytes, frame: frame)
    }
    let nameLength = try checkedNameLength(bytes)
    guard nameLength == stream.count else { return nil }
    guard sameBytes(bytes.baseAddress! + headerSize, stream.baseAddress, count: nameLength) else { return nil }
    return try positionalFields(bytes, nameLength: nameLength)
  }

  /// Whether `count` bytes at `a` and at `b` are the same: a stream's name
  /// against a record's, once for every record a replay reads. Compared
  /// here, a word at a time: a call of `memcmp` for a name of a few bytes
  /// was 3 % of a replay process (automerge-paper, `perf`).
  @inline(__always)
  static func sameBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer?, count: Int) -> Bool {
    guard count > 0 else { return true }
    guard let b else { preconditionFailure("\(count) bytes to compare at no address") }
    var i = 0
    while i + 8 <= count {
      guard a.loadUnaligned(fromByteOffset: i, as: UInt64.self) == b.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      else { return false }
      i += 8
    }
    while i < count {
      guard a.load(fromByteOffset: i, as: UInt8.self) == b.load(fromByteOffset: i, as: UInt8.self) else { return false }
      i += 1
    }
    return true
  }

  /// The positional effect of a record of any stream, its checksum checked.
  package static func positional(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> PositionalEvent {
    if let first = bytes.first, isFramed(first) {
      return try framedPositional(bytes, frame: try frame(of: bytes, verifyingChecksum: true))
    }
    return try positionalFields(bytes, nameLength: checkedNameLength(bytes))
  }

  /// A framed record's positions, from a frame `frame(of:)` has checked.
  @inline(__always)
  static func framedPositional(_ bytes: UnsafeRawBufferPointer, frame: Frame) throws(DecodeError) -> PositionalEvent {
    let seq = bytes.loadBigEndian(fromByteOffset: 3, as: UInt64.self)
    let version = bytes.loadBigEndian(fromByteOffset: 11, as: UInt64.self)
    let id = ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[27..<43]))
    let p = framedHeaderSize + frame.nameLength
    @inline(__always) func field(_ k: Int) -> UInt64 { bytes.loadBigEndian(fromByteOffset: p + 8 * k, as: UInt64.self) }
    let change: PositionalEvent.Change
    let fields: Int
    switch frame.op {
    case opInsert: (change, fields) = (.insert(index: field(0)), 1)
    case opRemove: (change, fields) = (.remove(index: field(0)), 1)
    case opMove: (change, fields) = (.move(from: field(0), to: field(1)), 2)
    case opEdit: (change, fields) = (.edit(index: field(0), replaces: field(1)), 3)
    case opErase: (change, fields) = (.erase(index: field(0) == notLive ? nil : field(0)), 1)
    case opUnsign: (change, fields) = (.unsign, 1)
    default: (change, fields) = (.restore(index: field(0), textSeq: field(1)), 2)
    }
    var undoes: UInt64 = 0
    if frame.parts & partUndoes != 0 {
      undoes = field(fields)
      guard undoes != 0 else { throw .needlessFormat }
    }
    // The origin's change, after `undoes` when there is one.
    if frame.parts & partOrigin != 0, field(fields + Int(frame.parts & partUndoes) + 2) == 0 { throw .invalidOrigin }
    return PositionalEvent(seq: seq, version: version, id: id, change: change, undoes: undoes)
  }

  /// The length of a whole record's stream name, once its checksum, format
  /// and length are checked.
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

extension EventRecord {
  /// What a text record holds, lent as bytes (`ItemBytes`): `textRecord`
  /// without making strings.
  package enum TextBytes {
    case insert(ItemBytes)
    case edit(id: ItemID, text: UnsafeRawBufferPointer, time: Timestamp, inserted: UInt64)

    package var id: ItemID {
      switch self {
      case .insert(let item): return item.id
      case .edit(let id, _, _, _): return id
      }
    }
  }

  /// An insert's or an edit's fields, its sender and text as the record's
  /// own bytes (checked UTF-8); the checksums as `textRecord` checks them.
  ///
  /// - Warning: the bytes are `bytes`'s: valid while they are.
  package static func textBytes(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError)
    -> TextBytes
  {
    guard let format = bytes.first else { throw .truncated }
    if isFramed(format) {
      let frame = try frame(of: bytes, verifyingChecksum: verifyingChecksum)
      guard frame.hasBody else { throw .unknownOp(frame.op) }
      let id = ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[27..<43]))
      let time = Timestamp(milliseconds: bytes.loadBigEndian(fromByteOffset: 19, as: Int64.self))
      let (sender, text) = try framedBodyBytes(bytes, frame: frame)
      if frame.op == opInsert {
        let seq = bytes.loadBigEndian(fromByteOffset: 3, as: UInt64.self)
        var item = ItemBytes(id: id, text: text, sender: sender, time: time, seq: seq)
        // An erased body: flags 2, then the erase's seq (`framedBodyBytes` checked it); no other text is empty.
        if text.isEmpty, case let body = frame.body(of: bytes), body[0] == bodyErased {
          item.erased = body.loadBigEndian(fromByteOffset: 1, as: UInt64.self)
        }
        return .insert(item)
      }
      let inserted = bytes.loadBigEndian(fromByteOffset: framedHeaderSize + frame.nameLength + 16, as: UInt64.self)
      return .edit(id: id, text: text, time: time, inserted: inserted)
    }
    var reader = try fields(of: bytes, verifyingChecksum: verifyingChecksum)
    guard isKnown(format) else { throw .unknownFormatVersion(format) }
    let op = bytes[1]
    guard op == opInsert || (op == opEdit && format >= formatVersion2) else { throw .unknownOp(op) }
    let seq = bytes.loadBigEndian(fromByteOffset: 2, as: UInt64.self)
    let time = Timestamp(milliseconds: bytes.loadBigEndian(fromByteOffset: 18, as: Int64.self))
    let id = ItemID(bytes: UnsafeRawBufferPointer(rebasing: bytes[26..<42]))
    let nameLength = Int(bytes.loadBigEndian(fromByteOffset: 42, as: UInt16.self))
    /// Where an edit keeps the seq of its insert.
    let insertedAt = headerSize + nameLength + 16
    _ = try reader.take(headerSize + nameLength + (op == opInsert ? 8 : 24))
    if format >= formatVersion2 { try reader.reserveTail(tail(of: format)) }
    var sender: UnsafeRawBufferPointer? = nil
    switch try reader.u8() {
    case 0: break
    case 1: sender = try reader.utf8(Int(try reader.u32()), field: "sender")
    case let flag: throw .invalidFlag(flag)
    }
    let text = try reader.utf8(Int(try reader.u32()), field: "text")
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    if op == opInsert { return .insert(ItemBytes(id: id, text: text, sender: sender, time: time, seq: seq)) }
    return .edit(
      id: id, text: text, time: time, inserted: bytes.loadBigEndian(fromByteOffset: insertedAt, as: UInt64.self))
  }
}

extension EventRecord {
  /// A framed record's sender and text as its own bytes: the body's
  /// checksum checked, its lengths exact, both valid UTF-8.
  @inline(__always)
  static func framedBodyBytes(_ bytes: UnsafeRawBufferPointer, frame: Frame) throws(DecodeError) -> (
    sender: UnsafeRawBufferPointer?, text: UnsafeRawBufferPointer
  ) {
    let body = frame.body(of: bytes)
    let stored = bytes.loadBigEndian(fromByteOffset: bytes.count - 8, as: UInt32.self)
    let computed = bodyChecksum(frame: bytes.loadBigEndian(fromByteOffset: bytes.count - 4, as: UInt32.self), body)
    guard stored == computed else { throw .bodyChecksumMismatch(stored: stored, computed: computed) }
    guard let flags = body.first else { throw .truncated }
    // Erased and unsigned bodies are rare: read apart, so that every
    // list's and replay's path through a plain body stays short.
    guard flags & ~bodyHasSender == 0 else { return try markedBodyBytes(body, flags: flags, op: frame.op) }
    var p = 1
    let sender = flags == bodyHasSender ? try lengthPrefixedUTF8(body, at: &p, "sender") : nil
    let text = try lengthPrefixedUTF8(body, at: &p, "text")
    guard p == body.count else { throw .trailingBytes(body.count - p) }
    return (sender, text)
  }

  /// An erased body (no sender, an empty text; the erase's seq is the
  /// frame's business) or an edit's body whose sender was taken off (the
  /// unsign's seq, then the text).
  @inline(never)
  static func markedBodyBytes(_ body: UnsafeRawBufferPointer, flags: UInt8, op: UInt8) throws(DecodeError) -> (
    sender: UnsafeRawBufferPointer?, text: UnsafeRawBufferPointer
  ) {
    if flags == bodyErased {
      guard body.count == 9 else { throw body.count < 9 ? .truncated : .trailingBytes(body.count - 9) }
      return (nil, UnsafeRawBufferPointer(rebasing: body[1..<1]))
    }
    guard flags == bodyUnsigned, op == opEdit else { throw .invalidFlag(flags) }
    guard body.count >= 9 else { throw .truncated }
    var p = 9
    let text = try lengthPrefixedUTF8(body, at: &p, "text")
    guard p == body.count else { throw .trailingBytes(body.count - p) }
    // One encoding per event: an unsigned empty text is written erased (`framedBody` refuses it too).
    guard text.count > 0 else { throw .invalidFlag(bodyUnsigned) }
    return (nil, text)
  }

  /// The u32-length-prefixed UTF-8 run at `p` of `body`, `p` moved past it.
  @inline(__always)
  static func lengthPrefixedUTF8(_ body: UnsafeRawBufferPointer, at p: inout Int, _ field: String) throws(DecodeError)
    -> UnsafeRawBufferPointer
  {
    guard p + 4 <= body.count else { throw .truncated }
    let length = Int(body.loadBigEndian(fromByteOffset: p, as: UInt32.self))
    guard length <= body.count - p - 4 else { throw .truncated }
    let run = UnsafeRawBufferPointer(rebasing: body[(p + 4)..<(p + 4 + length)])
    guard ByteReader.isValidUTF8(run) else { throw .invalidUTF8(field: field) }
    p += 4 + length
    return run
  }
}
