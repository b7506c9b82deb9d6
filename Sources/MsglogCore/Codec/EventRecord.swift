/// The on-disk form of an event: versioned, length-prefixed, checksummed.
///
/// Two layouts (documented for third-party readers in docs/FORMAT.md —
/// keep the two in step):
///
/// - **whole** (record formats 1 to 3, `EventRecord+Whole`): one CRC-32C
///   over the whole record, last. What msglog wrote before format 4, and
///   what a PostgreSQL log and an LMDB database from before `msglog/6`
///   still write; a log without edits, restores and undos is all format 1.
/// - **framed** (record format 4, `EventRecord+Framed`): the *frame* —
///   every field but an insert's or an edit's sender and text — and the
///   *body* holding those two, each with its own CRC-32C, the frame's
///   last. Blanking a text (an erase) rewrites the body and its checksum in
///   place and leaves the frame, its checksum, and so every check a replica
///   makes of it, as they were. New LMDB databases (`msglog/6`) write it.
///
/// Any reader takes either: the first byte says which.
package enum EventRecord {
  package static let formatVersion: UInt8 = 1
  /// The format of the records of working together (edit, restore, `undoes`).
  package static let formatVersion2: UInt8 = 2
  /// The format of the events made from a replica's changes: format 2 and
  /// their origin.
  package static let formatVersion3: UInt8 = 3
  /// The framed record: a frame and an erasable body, checked apart.
  package static let formatVersion4: UInt8 = 4
  /// The erase event (`Event.Op.erase`): framed as format 4 is, with op
  /// 6, which no msglog before it reads. A log holding one is refused by
  /// an older msglog by this format (its container moves on with it);
  /// the records an erase blanks stay format 4, their bodies marked erased.
  package static let formatVersion5: UInt8 = 5
  /// The unsign event (`Event.Op.unsign`, op 7): framed, no body. A log
  /// holding one may hold edits whose body is unsigned (flags 4), which no
  /// msglog before it reads: this format is what refuses them (the
  /// container moves on with it).
  package static let formatVersion6: UInt8 = 6
  /// The newest record format this msglog reads.
  package static let newestFormat = formatVersion6

  /// The newest record format a store writing in `layout` writes: what a
  /// remote announces to its replicas, so that one too old to read its
  /// records says so before it pulls any.
  package static func newestFormat(in layout: Layout) -> UInt8 {
    layout == .framed ? formatVersion4 : formatVersion3
  }
  static let opInsert: UInt8 = 1
  static let opRemove: UInt8 = 2
  static let opMove: UInt8 = 3
  static let opEdit: UInt8 = 4
  static let opRestore: UInt8 = 5
  static let opErase: UInt8 = 6
  static let opUnsign: UInt8 = 7
  /// An erase's index when its item was removed already (not live).
  static let notLive = UInt64.max
  /// The longest record the limits allow: an edit with the longest stream
  /// name, sender and text, and an origin. A pulled frame claiming more is
  /// refused before it is read.
  package static let maxSize =
    headerSize + Limits.maxStreamNameBytes + 3 * 8 + 1 + 4 + Limits.maxSenderBytes + 4 + Limits.maxTextBytes
    + format3Tail + 4 + framedExtra
  /// What a framed record (format 4) holds beyond a whole one: its parts
  /// byte and its body's checksum (the longest record is framed).
  static let framedExtra = 1 + 4

  /// How a store writes the records it appends.
  package enum Layout: Sendable, Equatable {
    /// Record formats 1 to 3: one checksum over the whole record.
    case whole
    /// Record format 4: a frame and an erasable body, each checked.
    case framed
  }

  /// Why a record could not be decoded.
  package enum DecodeError: Error, Equatable, CustomStringConvertible, Sendable {
    case truncated
    case checksumMismatch(stored: UInt32, computed: UInt32)
    /// A framed record's body fails its own checksum (its frame is sound).
    case bodyChecksumMismatch(stored: UInt32, computed: UInt32)
    case unknownFormatVersion(UInt8)
    case unknownOp(UInt8)
    case invalidUTF8(field: String)
    case trailingBytes(Int)
    case invalidFlag(UInt8)
    /// A format 2 record of an event that format 1 holds (it undoes nothing),
    /// or a framed record saying it undoes seq 0.
    case needlessFormat
    /// A record whose origin is not one (change 0).
    case invalidOrigin

    package var description: String {
      switch self {
      case .truncated: return "record is truncated"
      case .checksumMismatch(let stored, let computed):
        return "checksum mismatch (stored 0x\(Hex.text(stored, width: 8)), computed 0x\(Hex.text(computed, width: 8)))"
      case .bodyChecksumMismatch(let stored, let computed):
        return "checksum mismatch of its text (stored 0x\(Hex.text(stored, width: 8)), "
          + "computed 0x\(Hex.text(computed, width: 8)))"
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

  /// The record format `event` is written in, in `layout`.
  package static func format(of event: Event, in layout: Layout = .whole) -> UInt8 {
    if case .erase = event.op { return formatVersion5 }
    if case .unsign = event.op { return formatVersion6 }
    if layout == .framed { return formatVersion4 }
    if event.origin != nil { return formatVersion3 }
    switch event.op {
    case .edit, .restore: return formatVersion2
    case .insert, .remove, .move: return event.undoes == nil ? formatVersion : formatVersion2
    case .erase: return formatVersion5
    case .unsign: return formatVersion6
    }
  }

  /// The layout of a record, from its first byte (nil: no format this msglog reads).
  package static func layout(of record: UnsafeRawBufferPointer) -> Layout? {
    guard let format = record.first, isKnown(format) else { return nil }
    return isFramed(format) ? .framed : .whole
  }

  package static func layout(of record: [UInt8]) -> Layout? {
    record.withUnsafeBytes { layout(of: $0) }
  }

  /// Encodes `event` into its record bytes in `layout`.
  package static func encode(_ event: Event, layout: Layout = .whole) -> [UInt8] {
    var out: [UInt8] = []
    encode(event, layout: layout, into: &out)
    return out
  }

  /// Encodes `event` in `layout`, replacing what `out` held (a buffer used
  /// again for every record of a bulk load).
  package static func encode(_ event: Event, layout: Layout, into out: inout [UInt8]) {
    out.removeAll(keepingCapacity: true)
    // An erase is framed in either store: its format is what an older
    // msglog refuses, and a whole layout has no room for an erased body.
    switch event.op {
    case .erase, .unsign: return encodeFramed(event, into: &out)
    default: break
    }
    if event.erased != nil { return encodeFramed(event, into: &out) }
    switch layout {
    case .whole: encodeWhole(event, into: &out)
    case .framed: encodeFramed(event, into: &out)
    }
  }

  /// Whether `record` is exactly the encoding of `event` in the record's
  /// own layout: no two byte strings hold one event (a pulled record, a
  /// fuzzed one).
  package static func isCanonical(_ record: [UInt8], of event: Event) -> Bool {
    guard let layout = layout(of: record) else { return false }
    return encode(event, layout: layout) == record
  }

  /// Decodes record bytes, checking its checksums first.
  ///
  /// - Warning: `bytes` may point into an LMDB page; nothing returned refers
  ///   to it, so the caller may end the transaction afterwards.
  package static func decode(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> Event {
    try decode(bytes, verifyingChecksum: true)
  }

  /// Decodes, skipping the checksum only when the caller has just verified
  /// these very bytes (replay's second pass, in the same transaction); a
  /// framed record's body is checked either way.
  package static func decode(_ bytes: UnsafeRawBufferPointer, verifyingChecksum: Bool) throws(DecodeError) -> Event {
    guard let format = bytes.first else { throw .truncated }
    if isFramed(format) { return try decodeFramed(bytes, verifyingChecksum: verifyingChecksum) }
    return try decodeWhole(bytes, verifyingChecksum: verifyingChecksum)
  }

  package static func decode(_ bytes: [UInt8]) throws(DecodeError) -> Event {
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(DecodeError) -> Event in try decode(raw) }
    }
    return try result.get()
  }

  /// The checksum a replica compares with its remote's record at one seq
  /// (`/api/sync/pull?check=`): the record's last 4 bytes — a framed
  /// record's frame checksum, which no erasure of its text changes.
  package static func headCheck(_ record: UnsafeRawBufferPointer) -> UInt32 {
    record.loadBigEndian(fromByteOffset: record.count - 4, as: UInt32.self)
  }

  /// The checksum of the record's frame — every field but an insert's or
  /// an edit's sender and text — as the record framed has it: what an
  /// erasure or an unsign leaves alone, in a whole record too (its
  /// `headCheck` covers the text). Nil: no record this msglog reads.
  package static func frameCheck(_ record: UnsafeRawBufferPointer) -> UInt32? {
    switch layout(of: record) {
    case .framed?:
      return record.count >= 4 ? headCheck(record) : nil
    case .whole?:
      guard let event = try? decode(record) else { return nil }
      return encode(event, layout: .framed).withUnsafeBytes(headCheck)
    case nil:
      return nil
    }
  }
}

extension EventRecord {
  /// Whether this msglog reads records of `format`.
  @inline(__always)
  static func isKnown(_ format: UInt8) -> Bool { format >= formatVersion && format <= formatVersion6 }

  /// Whether a record of `format` is framed (formats 4 to 6).
  @inline(__always)
  static func isFramed(_ format: UInt8) -> Bool { format >= formatVersion4 && format <= formatVersion6 }
}
