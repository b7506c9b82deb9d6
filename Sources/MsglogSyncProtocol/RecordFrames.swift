import MsglogCore

/// How a pull's answer carries records (`application/vnd.msglog.records`):
/// each as a u32 big-endian length and the record's bytes, exactly as the
/// log holds them, so the replica keeps the remote's bytes and checks each
/// record's own checksum.
package enum RecordFrames {
  package static let contentType = "application/vnd.msglog.records"

  /// Appends a record's frame to `out`.
  package static func append(_ record: UnsafeRawBufferPointer, to out: inout [UInt8]) {
    out.appendBigEndian(UInt32(record.count))
    out.append(contentsOf: record)
  }

  /// Reads frames from pieces of an answer as they arrive, handing on each
  /// record as soon as it is whole. A frame's length is shown to `admit`
  /// as soon as it arrives, before its bytes are waited for, so a reader
  /// can refuse a frame it has no room for without holding it.
  package struct Reader {
    private var pending: [UInt8] = []
    private var start = 0
    /// The length of the frame being read, once admitted.
    private var admitted: Int? = nil

    package init() {}

    /// Whether the pieces so far end on a frame's end.
    package var isAtEnd: Bool { pending.count == start }

    package mutating func feed(
      _ piece: [UInt8], admit: (Int) throws -> Void, take: ([UInt8]) throws -> Void
    ) throws {
      if start > 0 {
        pending.removeFirst(start)
        start = 0
      }
      pending += piece
      while pending.count - start >= 4 {
        let length =
          admitted ?? pending.withUnsafeBytes { Int($0.loadBigEndian(fromByteOffset: start, as: UInt32.self)) }
        if admitted == nil {
          try admit(length)
          admitted = length
        }
        guard pending.count - start - 4 >= length else { break }
        let record = Array(pending[(start + 4)..<(start + 4 + length)])
        start += 4 + length
        admitted = nil
        try take(record)
      }
    }
  }
}
