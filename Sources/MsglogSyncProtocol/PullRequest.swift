import MsglogCore

/// A replica's pull (`GET /api/sync/pull?log=L&after=C&check=XXXXXXXX&limit=N`):
/// the remote's records after seq `after`, a bounded page, once it has
/// checked that its record at `after` is the one the replica holds
/// (`check`: that record's CRC-32C, its last 4 bytes, as 8 hex digits).
///
/// The answer is `RecordFrames` (`application/vnd.msglog.records`), with
/// the remote's head in `Msglog-Head`; the replica reads it through
/// `PulledPage` into a `RecordPage`.
package struct PullRequest: Equatable, Sendable {
  package var log: ItemID
  package var after: UInt64
  package var check: UInt32?
  /// 0 to `SyncProtocol.pageRecords`; 0 only checks.
  package var limit: Int

  package init(log: ItemID, after: UInt64, check: UInt32?, limit: Int = SyncProtocol.pageRecords) {
    self.log = log
    self.after = after
    self.check = check
    self.limit = limit
  }

  /// What makes a query no pull, in the order it is checked.
  package enum Problem: Error, Equatable, Sendable {
    /// `log` is missing or no UUID.
    case noLog
    /// `after` or `limit` is no whole number from 0 to 2^63-1.
    case notANumber(member: String, text: String)
    case limitOutOfRange
    /// `check` is not 8 hex digits.
    case malformedCheck
  }

  /// The path and query a replica asks for.
  package var target: String {
    var target = SyncProtocol.pullPath + "?log=\(log.text)&after=\(after)&limit=\(limit)"
    if let check { target += "&check=\(Hex.text(check, width: 8))" }
    return target
  }

  /// Reads a pull from its query's members (`query(name)`: the value, or nil).
  package init(query: (String) -> String?) throws(Problem) {
    guard let text = query("log"), let log = ItemID(canonical: text) else { throw .noLog }
    func number(_ name: String) throws(Problem) -> UInt64? {
      guard let text = query(name) else { return nil }
      guard let value = Limits.parseNumber(text) else { throw .notANumber(member: name, text: text) }
      return value
    }
    self.log = log
    after = try number("after") ?? 0
    let limit = try number("limit") ?? UInt64(SyncProtocol.pageRecords)
    guard limit <= UInt64(SyncProtocol.pageRecords) else { throw .limitOutOfRange }
    self.limit = Int(limit)
    check = nil
    if let text = query("check") {
      guard text.utf8.count == 8, let bytes = Hex.bytes(text.utf8) else { throw .malformedCheck }
      check = bytes.withUnsafeBytes { $0.loadBigEndian(as: UInt32.self) }
    }
  }
}

/// A page of a remote's records, in seq order from the one asked for.
public struct RecordPage: Equatable, Sendable {
  public var head: UInt64
  public var records: [[UInt8]]
  /// The records' events, when the page was checked as it arrived
  /// (`PulledPage`); nil: checked when it is taken in.
  package var events: [Event]?

  public init(head: UInt64, records: [[UInt8]]) {
    self.head = head
    self.records = records
  }

  package init(head: UInt64, checked page: PulledPage) {
    self.head = head
    records = page.records
    events = page.events
  }
}
