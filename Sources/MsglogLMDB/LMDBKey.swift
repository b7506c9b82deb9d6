import MsglogCore

/// Keys: the `events` table's are the seq as 8 big-endian bytes, so that
/// LMDB's bytewise order is seq order; per-stream tables use the stream
/// name, a 0 byte (names hold no control characters) and 8 big-endian bytes
/// (`DerivedRows.streamKey`).
enum Key {
  static func seq(_ seq: UInt64) -> [UInt8] { [UInt8](bigEndian: seq) }

  /// The seq an `events` key holds; any other key there is a damaged log.
  static func seq(_ key: UnsafeRawBufferPointer) throws -> UInt64 {
    guard key.count == 8 else {
      throw MsglogError.corruptedLog("the events table holds a key of \(key.count) bytes, which is not a seq")
    }
    return key.loadBigEndian(as: UInt64.self)
  }

  /// A `heads` key: a stream name, which must be UTF-8.
  static func streamName(_ key: UnsafeRawBufferPointer, table: DerivedRows.Table) throws -> StreamName {
    guard let text = String(validating: key, as: UTF8.self), !key.isEmpty else {
      throw DerivedDamage(table, "a key is not a stream name")
    }
    return StreamName(text)
  }

  static func streamPrefix(_ stream: StreamName) -> [UInt8] { stream.bytes + [0] }

  static func hasPrefix(_ key: UnsafeRawBufferPointer, _ prefix: [UInt8]) -> Bool {
    key.count == prefix.count + 8 && key.prefix(prefix.count).elementsEqual(prefix)
  }

  /// The number after the prefix.
  static func suffix(_ key: UnsafeRawBufferPointer) -> UInt64 {
    key.loadBigEndian(fromByteOffset: key.count - 8, as: UInt64.self)
  }
}
