import CLibPQ
import MsglogCore

/// Rows for `COPY … FROM STDIN (FORMAT binary)` (`Connection.startCopy`),
/// in PostgreSQL's binary copy format, sent to the server in chunks as
/// they are made: a signature and header, then per row its number
/// of fields and each field as a length (-1 for NULL) and its bytes in the
/// type's binary form (an `int8` big-endian, a `bytea` as is, a `uuid` its
/// 16 bytes), then -1.
struct CopyRows {
  private let connection: Connection
  private var buffer: [UInt8] = []
  /// Whether the copy has ended (finished, abandoned, or failed).
  private(set) var isOver = false
  /// What is sent at once: large enough that a call's cost vanishes, small
  /// enough that the server works on one chunk while the next is made.
  static let chunk = 1 << 20

  static let signature: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00]

  init(connection: Connection) {
    self.connection = connection
    buffer.reserveCapacity(Self.chunk + 64 * 1024)
    buffer.append(contentsOf: Self.signature)
    buffer.appendBigEndian(Int32(0))  // flags: no OIDs
    buffer.appendBigEndian(Int32(0))  // no header extension
  }

  /// Starts a row of `fields` fields, sending what is made so far when it is a chunk.
  mutating func row(_ fields: Int16) throws(PostgresError) {
    if buffer.count >= Self.chunk { try send() }
    buffer.appendBigEndian(fields)
  }

  mutating func int8(_ value: UInt64) {
    buffer.appendBigEndian(Int32(8))
    buffer.appendBigEndian(value)
  }

  mutating func bytes(_ value: UnsafeRawBufferPointer) {
    buffer.appendBigEndian(Int32(value.count))
    buffer.append(contentsOf: value)
  }

  mutating func bytes(_ value: [UInt8]) {
    buffer.appendBigEndian(Int32(value.count))
    buffer.append(contentsOf: value)
  }

  mutating func uuid(_ id: ItemID) {
    buffer.appendBigEndian(Int32(16))
    id.withUnsafeBytes { buffer.append(contentsOf: $0) }
  }

  mutating func null() { buffer.appendBigEndian(Int32(-1)) }

  /// Ends the rows (the trailer), sends what is left and ends the copy.
  /// - Throws: the copy's failure (a row the server refused, a lost connection).
  mutating func finish() throws(PostgresError) {
    buffer.appendBigEndian(Int16(-1))
    try send()
    isOver = true
    if let failure = connection.endCopy(abandoning: false) { throw failure }
  }

  /// Ends the copy without its rows: nothing of it is written, and the
  /// transaction it is in has failed.
  mutating func abandon() {
    guard !isOver else { return }
    isOver = true
    _ = connection.endCopy(abandoning: true)
  }

  private mutating func send() throws(PostgresError) {
    do {
      try connection.putCopyData(buffer)
    } catch {
      isOver = true
      throw connection.endCopy(abandoning: true) ?? error
    }
    buffer.removeAll(keepingCapacity: true)
  }
}
