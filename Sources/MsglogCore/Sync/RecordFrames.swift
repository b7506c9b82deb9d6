/// How a pull's answer carries records (`application/vnd.msglog.records`):
/// each as a u32 big-endian length and the record's bytes, exactly as the
/// log holds them, so the replica keeps the remote's bytes and checks each
/// record's own checksum.
package enum RecordFrames {
  package static let contentType = "application/vnd.msglog.records"
  /// The longest record a frame may claim: a 1 MiB text, a sender, a
  /// stream name and the fixed fields, with room to spare.
  package static let maxRecord = 2 << 20

  /// Appends a record's frame to `out`.
  package static func append(_ record: UnsafeRawBufferPointer, to out: inout [UInt8]) {
    out.appendBigEndian(UInt32(record.count))
    out.append(contentsOf: record)
  }

  /// Reads frames from pieces of an answer as they arrive.
  package struct Reader {
    package private(set) var records: [[UInt8]] = []
    private var pending: [UInt8] = []

    package init() {}

    /// Whether the pieces so far end on a frame's end.
    package var isAtEnd: Bool { pending.isEmpty }

    package mutating func feed(_ piece: [UInt8]) throws(MsglogError) {
      pending += piece
      var start = 0
      while pending.count - start >= 4 {
        let length = pending.withUnsafeBytes { Int($0.loadBigEndian(fromByteOffset: start, as: UInt32.self)) }
        guard length <= RecordFrames.maxRecord else {
          throw .corruptedLog("a pulled frame claims \(length) bytes, more than any record")
        }
        guard pending.count - start - 4 >= length else { break }
        records.append(Array(pending[(start + 4)..<(start + 4 + length)]))
        start += 4 + length
      }
      if start > 0 { pending.removeFirst(start) }
    }
  }
}
