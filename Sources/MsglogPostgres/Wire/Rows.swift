import CLibPQ
import MsglogCore

/// The rows a statement returned, in binary format.
final class Rows {
  let handle: OpaquePointer

  init(_ handle: OpaquePointer) { self.handle = handle }
  deinit { PQclear(handle) }

  var count: Int { Int(PQntuples(handle)) }

  func isNull(_ row: Int, _ column: Int) -> Bool { PQgetisnull(handle, Int32(row), Int32(column)) == 1 }

  /// Lends the value's bytes to `body`. They live in the result, which
  /// is cleared when this object goes — and Swift may let it go right
  /// after its last use, not at the end of the caller's scope: a pointer
  /// handed out and read after that read freed memory (a follow on a
  /// trimmed log found its horizon "failing its checksum", in release
  /// builds only). So they are only lent, within a method of this object.
  func withBytes<R, E: Error>(_ row: Int, _ column: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
  {
    try body(bytes(row, column))
  }

  /// A copy of the value's bytes.
  func copiedBytes(_ row: Int, _ column: Int) -> [UInt8] { Array(bytes(row, column)) }

  private func bytes(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer {
    let length = Int(PQgetlength(handle, Int32(row), Int32(column)))
    return UnsafeRawBufferPointer(start: PQgetvalue(handle, Int32(row), Int32(column)), count: length)
  }

  func int64(_ row: Int, _ column: Int) -> Int64? {
    guard !isNull(row, column) else { return nil }
    let raw = bytes(row, column)
    guard raw.count == 8 else { return nil }
    return raw.loadBigEndian(as: Int64.self)
  }

  /// A boolean (one byte in the binary format).
  func bool(_ row: Int, _ column: Int) -> Bool? {
    guard !isNull(row, column), let byte = bytes(row, column).first else { return nil }
    return byte != 0
  }

  func uint64(_ row: Int, _ column: Int) -> UInt64? { int64(row, column).map { UInt64(bitPattern: $0) } }

  func text(_ row: Int, _ column: Int) -> String? {
    guard !isNull(row, column) else { return nil }
    return String(decoding: bytes(row, column), as: UTF8.self)
  }
}
