/// Integers in the byte order of every format msglog writes: event records,
/// derived rows, LMDB keys and PostgreSQL's binary parameters are all
/// big-endian, so that bytewise order is numeric order.
///
/// `@inlinable`: the stores call these for every key they read, from
/// other modules, where an unspecialised generic call per record made a
/// cursor scan four times slower.
extension UnsafeRawBufferPointer {
  /// The big-endian integer at `offset`, at any alignment.
  @inlinable @inline(__always)
  package func loadBigEndian<T: FixedWidthInteger>(fromByteOffset offset: Int = 0, as type: T.Type) -> T {
    T(bigEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
  }
}

extension Array where Element == UInt8 {
  /// `value`'s bytes, most significant first (a key of one integer).
  @inlinable @inline(__always)
  package init<T: FixedWidthInteger>(bigEndian value: T) {
    self = Swift.withUnsafeBytes(of: value.bigEndian) { Array($0) }
  }

  /// Appends `value`'s bytes, most significant first.
  @inlinable @inline(__always)
  package mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
    var v = value.bigEndian
    Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
  }

  /// Appends `count` zero bytes: the room a record or an escaped text is
  /// then written into through a pointer.
  ///
  /// Copied from a block of zeros, not `repeatElement(0, count:)`: a debug
  /// build steps that through generic code a byte at a time, so making room
  /// for a 1 MB message took 0.17 s and `serve`'s tests of big writes ran
  /// ten times slower. Optimised, a record's room is one copy either way.
  package mutating func appendZeros(count: Int) {
    precondition(count >= 0, "room of a negative size")
    var left = count
    while left > 0 {
      let piece = Swift.min(left, zeroBlock.count)
      zeroBlock.withUnsafeBufferPointer { append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<piece])) }
      left -= piece
    }
  }
}

private let zeroBlock = [UInt8](repeating: 0, count: 4096)

/// Writes a record whose size is known through a pointer into room made
/// for it: no check or growth per field, where appending to an array
/// costs a call each (`EventRecord.encodeFramed`).
struct RecordWriter {
  private(set) var position: UnsafeMutableRawPointer

  init(_ start: UnsafeMutableRawPointer) { position = start }

  @inline(__always)
  mutating func byte(_ value: UInt8) {
    position.storeBytes(of: value, as: UInt8.self)
    position += 1
  }

  @inline(__always)
  mutating func bigEndian<T: FixedWidthInteger>(_ value: T) {
    position.storeBytes(of: value.bigEndian, as: T.self)
    position += MemoryLayout<T>.size
  }

  @inline(__always)
  mutating func bytes(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return }
    position.copyMemory(from: base, byteCount: bytes.count)
    position += bytes.count
  }

  /// `text`'s UTF-8.
  @inline(__always)
  mutating func utf8(_ text: String) {
    if text.utf8.withContiguousStorageIfAvailable({ bytes(UnsafeRawBufferPointer($0)) }) == nil {
      Array(text.utf8).withUnsafeBytes { bytes($0) }
    }
  }
}
