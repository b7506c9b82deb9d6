/// Reads fields front to back, throwing `.truncated` instead of reading past the end.
struct ByteReader {
  let bytes: UnsafeRawBufferPointer
  var offset = 0
  /// Where reading stops: the end, or before a tail set aside (`reserveTail`).
  private var limit: Int

  init(_ bytes: UnsafeRawBufferPointer) {
    self.bytes = bytes
    self.limit = bytes.count
  }

  var remaining: Int { limit - offset }

  /// Sets the last `n` bytes aside: the fields before them are read first.
  mutating func reserveTail(_ n: Int) throws(EventRecord.DecodeError) {
    guard n <= remaining else { throw .truncated }
    limit -= n
  }

  /// Makes the tail set aside readable again.
  mutating func releaseTail() { limit = bytes.count }

  mutating func take(_ n: Int) throws(EventRecord.DecodeError) -> UnsafeRawBufferPointer {
    guard n >= 0, n <= remaining else { throw .truncated }
    defer { offset += n }
    return UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)])
  }

  mutating func u8() throws(EventRecord.DecodeError) -> UInt8 { try integer() }
  mutating func u16() throws(EventRecord.DecodeError) -> UInt16 { try integer() }
  mutating func u32() throws(EventRecord.DecodeError) -> UInt32 { try integer() }
  mutating func u64() throws(EventRecord.DecodeError) -> UInt64 { try integer() }

  @inline(__always)
  mutating func integer<T: FixedWidthInteger>() throws(EventRecord.DecodeError) -> T {
    let n = MemoryLayout<T>.size
    guard n <= remaining else { throw .truncated }
    defer { offset += n }
    return bytes.loadBigEndian(fromByteOffset: offset, as: T.self)
  }

  mutating func uuid() throws(EventRecord.DecodeError) -> ItemID {
    ItemID(bytes: try take(16))
  }

  /// An insert's sender flag, sender and text.
  mutating func insertBody() throws(EventRecord.DecodeError) -> (sender: String?, text: String) {
    var sender: String? = nil
    switch try u8() {
    case 0: break
    case 1: sender = try string(Int(try u32()), field: "sender")
    case let flag: throw .invalidFlag(flag)
    }
    return (sender, try string(Int(try u32()), field: "text"))
  }

  /// `n` bytes of valid UTF-8, lent where they lie.
  mutating func utf8(_ n: Int, field: String) throws(EventRecord.DecodeError) -> UnsafeRawBufferPointer {
    let b = try take(n)
    guard Self.isValidUTF8(b) else { throw .invalidUTF8(field: field) }
    return b
  }

  /// Whether `bytes` are valid UTF-8: ASCII (nearly every text and sender)
  /// is told eight bytes at a time, anything else by the standard library.
  @inline(__always)
  static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var i = 0
    while i + 8 <= bytes.count {
      if bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return slowUTF8(bytes) }
      i += 8
    }
    while i < bytes.count {
      if bytes[i] >= 0x80 { return slowUTF8(bytes) }
      i += 1
    }
    return true
  }

  static func slowUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
    (try? UTF8Span(validating: bytes.assumingMemoryBound(to: UInt8.self).span)) != nil
  }

  mutating func string(_ n: Int, field: String) throws(EventRecord.DecodeError) -> String {
    let b = try take(n)
    // Validated where the bytes lie and copied once; the generic
    // `String(validating:as:)` walks a Sequence and costs several times more.
    guard let utf8 = try? UTF8Span(validating: b.assumingMemoryBound(to: UInt8.self).span) else {
      throw .invalidUTF8(field: field)
    }
    return String(copying: utf8)
  }
}
