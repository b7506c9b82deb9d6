/// Record format 4: a frame and an erasable body, each with its own
/// checksum (docs/FORMAT.md, "Record format 4").
///
///     frame:
///     1    u8    op: 1 insert, 2 remove, 3 move, 4 edit, 5 restore
///                (6 erase: format 5 only; 7 unsign: format 6 only)
///     2    u8    parts: bit 0 `undoes` follows the op's fields, bit 1 the
///                origin follows it; no other bit
///     3    u64   seq (equals the key)
///     11   u64   stream version
///     19   i64   time, milliseconds since the Unix epoch, UTC
///     27   16B   item id
///     43   u16   stream name length N, then N bytes of UTF-8
///     45+N       the op's fields, as in formats 1 to 3 (no sender, no text)
///                [u64 undoes, not 0] [16B replica, u64 change, i64 made]
///     body (insert and edit only):
///          u8    flags: bit 0 a sender follows; bit 1 erased; no other bit
///          [u32 length + sender] u32 length + text
///          or, erased (flags 2): u64 seq of the erase event, nothing else
///          or, an edit unsigned (flags 4): u64 seq of the unsign event,
///          u32 length + text (a text kept, its sender gone)
///          u32   CRC-32C of the frame and the body: every byte before it
///     last u32   CRC-32C of the frame
///
/// The frame is everything an erasure keeps (docs/FORMAT.md, "Forgetting");
/// its checksum is the record's last 4 bytes, so the check a replica makes
/// of its head (`headCheck`) is the same before and after. The body's
/// checksum covers the frame too, so a body cannot pass under another
/// record's frame; it is the frame's checksum continued over the body, so
/// a reader that has checked the frame checks the body in one more step.
extension EventRecord {
  /// The frame's fixed fields, before the stream name.
  static let framedHeaderSize = 45
  static let partUndoes: UInt8 = 1
  static let partOrigin: UInt8 = 2
  static let bodyHasSender: UInt8 = 1
  /// An erased body: the erase's seq where the sender and text were.
  static let bodyErased: UInt8 = 2
  /// An edit's sender taken off (`Event.Op.unsign`): the unsign's seq,
  /// then the text as before.
  static let bodyUnsigned: UInt8 = 4
  /// The bytes of the origin in a frame.
  static let originSize = 16 + 8 + 8

  /// The size of an op's fields (its positions) in either layout.
  @inline(__always)
  static func opFieldsSize(_ op: UInt8) -> Int? {
    switch op {
    case opInsert, opRemove: return 8
    case opMove, opRestore: return 16
    case opErase, opUnsign: return 8
    case opEdit: return 24
    default: return nil
    }
  }

  static func encodeFramed(_ event: Event, into out: inout [UInt8]) {
    switch event.op {
    case .insert(_, _, let text, let sender), .edit(_, let text, let sender, _, _, _):
      encodeFramed(event, text: text, sender: sender, into: &out)
    case .remove, .move, .restore, .erase, .unsign:
      encodeFramed(event, text: nil, sender: nil, into: &out)
    }
  }

  /// The record of `event`, whose body (an insert's or an edit's, nil
  /// for other ops) holds `text` and `sender` unless it is erased.
  ///
  /// Sized first and written through a pointer: appended field by field,
  /// a record was a dozen appends, each a call with its own checks, and
  /// the biggest part of an import's encoding.
  @inline(__always)
  private static func encodeFramed(_ event: Event, text: String?, sender: String?, into out: inout [UInt8]) {
    let name = event.stream.text
    let streamLength = name.utf8.count
    precondition(streamLength <= Int(UInt16.max), "stream names are validated before encoding")
    let op = opCode(event.op)
    let frameLength =
      framedHeaderSize + streamLength + opFieldsSize(op)! + (event.undoes != nil ? 8 : 0)
      + (event.origin != nil ? originSize : 0)
    // An edit unsigned keeps its text, after the unsign's seq (unsigned
    // with an empty text, it is written erased: one encoding per event);
    // an erased body holds the erase's seq alone.
    let unsigned = text != nil && event.isUnsigned ? event.erased : nil
    let erased = text != nil && unsigned == nil ? event.erased : nil
    let keptText = erased == nil ? text : nil
    let keptSender = unsigned == nil && erased == nil ? sender : nil
    let flags = unsigned != nil ? bodyUnsigned : erased != nil ? bodyErased : keptSender != nil ? bodyHasSender : 0
    var bodyLength = 0
    if text != nil {
      bodyLength = 1 + (unsigned != nil || erased != nil ? 8 : 0) + (keptText.map { 4 + $0.utf8.count } ?? 0)
      if let keptSender { bodyLength += 4 + keptSender.utf8.count }
    }
    let size = frameLength + (text != nil ? bodyLength + 4 : 0) + 4
    let offset = out.count
    out.appendZeros(count: size)
    out.withUnsafeMutableBytes { buffer in
      let start = buffer.baseAddress! + offset
      var w = RecordWriter(start)
      w.byte(format(of: event, in: .framed))
      w.byte(op)
      w.byte((event.undoes != nil ? partUndoes : 0) | (event.origin != nil ? partOrigin : 0))
      w.bigEndian(event.seq)
      w.bigEndian(event.version)
      w.bigEndian(UInt64(bitPattern: event.time.milliseconds))
      event.id.withUnsafeBytes { w.bytes($0) }
      w.bigEndian(UInt16(streamLength))
      w.utf8(name)
      writeOpFields(event.op, to: &w)
      if let undoes = event.undoes { w.bigEndian(undoes) }
      if let origin = event.origin { writeOrigin(origin, to: &w) }
      let frame = CRC32C.checksum(UnsafeRawBufferPointer(start: start, count: frameLength))
      if text != nil {
        let body = w.position
        w.byte(flags)
        if let seq = unsigned ?? erased { w.bigEndian(seq) }
        if let keptSender {
          w.bigEndian(UInt32(keptSender.utf8.count))
          w.utf8(keptSender)
        }
        if let keptText {
          w.bigEndian(UInt32(keptText.utf8.count))
          w.utf8(keptText)
        }
        w.bigEndian(bodyChecksum(frame: frame, UnsafeRawBufferPointer(start: body, count: bodyLength)))
      }
      w.bigEndian(frame)
      assert(w.position == start + size, "a framed record's size")
    }
  }

  /// The body's checksum: the CRC-32C of the frame and the body, that is
  /// the frame's checksum `frame` continued over the body.
  @inline(__always)
  static func bodyChecksum(frame: UInt32, _ body: UnsafeRawBufferPointer) -> UInt32 {
    CRC32C.update(frame, body)
  }

  /// Where a framed record's parts lie: its frame's length, and its body
  /// (flags to the end of the text: without its checksum), once the
  /// lengths agree and — unless the caller has just checked these very
  /// bytes — the frame's checksum holds. The body is not checked here.
  struct Frame {
    let nameLength: Int
    let op: UInt8
    let parts: UInt8
    /// Bytes 0..<length are the frame.
    let length: Int

    /// The body without its checksum; empty for an op that has none.
    @inline(__always)
    func body(of bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
      let end = bytes.count - 8
      return end > length
        ? UnsafeRawBufferPointer(rebasing: bytes[length..<end]) : UnsafeRawBufferPointer(start: nil, count: 0)
    }

    var hasBody: Bool { op == opInsert || op == opEdit }
  }

  @inline(__always)
  static func frame(of bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> Frame {
    let n = bytes.count
    guard n >= framedHeaderSize + 4 else { throw .truncated }
    let op = bytes[1]
    let parts = bytes[2]
    guard let fields = opFieldsSize(op) else { throw .unknownOp(op) }
    // Op 6 (erase) is format 5's alone, op 7 (unsign) format 6's, and
    // those formats hold nothing else.
    guard (op == opErase) == (bytes[0] == formatVersion5), (op == opUnsign) == (bytes[0] == formatVersion6) else {
      throw .unknownOp(op)
    }
    guard parts & ~(partUndoes | partOrigin) == 0 else { throw .invalidFlag(parts) }
    let nameLength = Int(bytes.loadBigEndian(fromByteOffset: 43, as: UInt16.self))
    var length = framedHeaderSize + nameLength + fields
    if parts & partUndoes != 0 { length += 8 }
    if parts & partOrigin != 0 { length += originSize }
    let hasBody = op == opInsert || op == opEdit
    // A body is at least its flags, a text length and its checksum.
    let least = length + (hasBody ? 9 : 0) + 4
    guard n >= least else { throw .truncated }
    guard hasBody || n == least else { throw .trailingBytes(n - least) }
    if verifyingChecksum {
      let stored = bytes.loadBigEndian(fromByteOffset: n - 4, as: UInt32.self)
      let computed = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[..<length]))
      guard stored == computed else { throw .checksumMismatch(stored: stored, computed: computed) }
    }
    return Frame(nameLength: nameLength, op: op, parts: parts, length: length)
  }

  /// A framed record's sender and text, its checksum checked; an erased
  /// body's are nil and empty, with the erase's seq.
  static func framedBody(_ bytes: UnsafeRawBufferPointer, frame: Frame) throws(DecodeError) -> (
    sender: String?, text: String, erased: UInt64?
  ) {
    var reader = try framedBodyReader(bytes, frame: frame)
    let flags = try reader.u8()
    if flags & ~bodyHasSender == 0 {
      let sender = flags == bodyHasSender ? try reader.string(Int(try reader.u32()), field: "sender") : nil
      let text = try reader.string(Int(try reader.u32()), field: "text")
      guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
      return (sender, text, nil)
    }
    // Erased (the erase's seq) or, an edit's, unsigned (the unsign's seq,
    // then the text): `framedBodyReader` lets no other flags through.
    let seq = try reader.u64()
    if flags == bodyErased {
      guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
      return (nil, "", seq)
    }
    let text = try reader.string(Int(try reader.u32()), field: "text")
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    // One encoding per event: an unsigned empty text is written erased.
    guard !text.isEmpty else { throw .invalidFlag(bodyUnsigned) }
    return (nil, text, seq)
  }

  /// A reader over a framed record's body, once its checksum holds and its
  /// flags are known.
  @inline(__always)
  static func framedBodyReader(_ bytes: UnsafeRawBufferPointer, frame: Frame) throws(DecodeError) -> ByteReader {
    let body = frame.body(of: bytes)
    let stored = bytes.loadBigEndian(fromByteOffset: bytes.count - 8, as: UInt32.self)
    let computed = bodyChecksum(frame: bytes.loadBigEndian(fromByteOffset: bytes.count - 4, as: UInt32.self), body)
    guard stored == computed else { throw .bodyChecksumMismatch(stored: stored, computed: computed) }
    guard let flags = body.first else { throw .truncated }
    guard flags & ~bodyHasSender == 0 || flags == bodyErased || (flags == bodyUnsigned && frame.op == opEdit) else {
      throw .invalidFlag(flags)
    }
    return ByteReader(body)
  }

  static func decodeFramed(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> Event {
    let frame = try frame(of: bytes, verifyingChecksum: verifyingChecksum)
    var reader = ByteReader(UnsafeRawBufferPointer(rebasing: bytes[..<frame.length]))
    _ = try reader.take(3)
    let seq = try reader.u64()
    let streamVersion = try reader.u64()
    let time = Timestamp(milliseconds: Int64(bitPattern: try reader.u64()))
    let id = try reader.uuid()
    let streamLength = Int(try reader.u16())
    let stream = StreamName(try reader.string(streamLength, field: "stream name"))
    let body: (sender: String?, text: String, erased: UInt64?) =
      frame.hasBody ? try framedBody(bytes, frame: frame) : (nil, "", nil)
    let op = try reader.op(frame.op, id: id, allowsWorkingTogether: true) { _ throws(DecodeError) in
      (body.sender, body.text)
    }
    var undoes: UInt64? = nil
    if frame.parts & partUndoes != 0 {
      undoes = try reader.u64()
      guard undoes != 0 else { throw .needlessFormat }
    }
    let origin = frame.parts & partOrigin != 0 ? try reader.origin() : nil
    guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
    return Event(
      seq: seq, stream: stream, version: streamVersion, time: time, op: op, undoes: undoes, origin: origin,
      erased: body.erased)
  }
}
