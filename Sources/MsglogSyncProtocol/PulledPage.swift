import MsglogCore

/// A page of a pull, taken record by record as it arrives and checked at
/// once against what the protocol allows (docs/SYNC.md, "The protocol"):
/// at most `limit` records, a record starting only while the page holds
/// less than `pageBytes` (the first one aside), none longer than a record
/// can be, each whole (its CRC-32C), in the form a msglog writes, and at
/// the next seq. So whatever a remote sends, a replica holds no more than
/// one page's worth before it refuses, and refuses at the first record
/// that breaks a rule.
package struct PulledPage {
  /// The seq the page starts after (the replica's head).
  package let after: UInt64
  package let limit: Int
  package let pageBytes: Int
  package private(set) var records: [[UInt8]] = []
  package private(set) var events: [Event] = []
  private var bytes = 0

  package init(after: UInt64, limit: Int, pageBytes: Int) {
    self.after = after
    self.limit = limit
    self.pageBytes = pageBytes
  }

  /// The last seq taken (the page's start when it holds none).
  package var lastSeq: UInt64 { events.last?.seq ?? after }

  /// Whether another record may start: the page is not yet full.
  package var hasRoom: Bool { records.count < limit && (records.isEmpty || bytes < pageBytes) }

  /// Refuses a record of `length` bytes before it is read, when the page
  /// has no room for it or no record can be that long.
  package func admit(length: Int) throws(RemoteFault) {
    guard records.count < limit else { throw .pageTooLong(records: records.count) }
    guard records.isEmpty || bytes < pageBytes else { throw .pageTooLarge(bytes: bytes) }
    guard length <= EventRecord.maxSize else { throw .recordTooLarge(bytes: length) }
  }

  /// Takes the next record, once it is found whole and at the next seq.
  package mutating func take(_ record: [UInt8]) throws(RemoteFault) {
    try admit(length: record.count)
    let event: Event
    do { event = try EventRecord.decode(record) } catch {
      throw .damagedRecord(after: lastSeq, reason: error.description)
    }
    guard event.seq == lastSeq + 1 else { throw .seqOutOfOrder(expected: lastSeq + 1, found: event.seq) }
    guard EventRecord.isCanonical(record, of: event) else { throw .recordNotCanonical(seq: event.seq) }
    records.append(record)
    events.append(event)
    bytes += record.count
  }

  /// Checks the head the remote claims against the records it sent.
  package func check(head: UInt64) throws(RemoteFault) {
    guard head >= lastSeq else { throw .headBehindRecords(claimed: head, seq: lastSeq) }
  }
}
