import MsglogCore
import MsglogSyncProtocol

/// A pull checks that the remote's record at the replica's head is the
/// one the replica holds, by its last 4 bytes. A framed record's are its
/// frame's checksum, which an erase or an unsign leaves as it was. A
/// whole one's (PostgreSQL's records, and an LMDB database's from before
/// `msglog/6`) cover its text: an erase at the remote writes the record
/// again framed, and the replica that copied it before then would be told
/// the remote "is not the log this replica was cloned from" until a
/// reset. So when that check fails, the replica reads the remote's record
/// there unchecked and, if it is its own framed anew — the same frame,
/// every field but the sender and the text — pulls without the check:
/// it has made a stronger one. The pull then brings the erase, and the
/// replica's record is framed as the remote's.
extension SyncRemote {
  /// Pulls `request`, whose check is of `held` (the replica's record at
  /// `request.after`), as above.
  func pull(_ request: PullRequest, holding held: [UInt8]?) throws -> RecordPage {
    do {
      return try pull(request)
    } catch let error as MsglogError where error.isAnotherLog {
      guard request.check != nil, let held, holdsFramedAnew(held, at: request.after, of: request.log) else {
        throw error
      }
      var unchecked = request
      unchecked.check = nil
      return try pull(unchecked)
    }
  }

  /// Whether the remote's record at `seq` is `held`, a whole record,
  /// written again framed by an erase or an unsign (its frame's checksum
  /// that of `held` framed; its body marked).
  private func holdsFramedAnew(_ held: [UInt8], at seq: UInt64, of log: ItemID) -> Bool {
    guard seq > 0, EventRecord.layout(of: held) == .whole,
      let page = try? pull(PullRequest(log: log, after: seq - 1, check: nil, limit: 1)),
      let theirs = page.records.first, EventRecord.layout(of: theirs) == .framed,
      (try? EventRecord.decode(theirs))?.erased != nil
    else { return false }
    let mine = held.withUnsafeBytes(EventRecord.frameCheck)
    return mine != nil && mine == theirs.withUnsafeBytes(EventRecord.frameCheck)
  }
}

extension EventLog {
  /// The replica's record at its head, whose last 4 bytes a pull after it
  /// checks; nil for an empty log, and for one at the seq before its
  /// horizon: a record there is one the replica wrote from a base
  /// (`takeBases`), in its own layout, not the remote's bytes (a
  /// PostgreSQL remote's are whole, an LMDB replica's framed).
  func headRecord() throws -> [UInt8]? {
    try readingBase { reader in
      let head = try reader.headSeq()
      guard head > 0, head >= (try reader.horizon().seq) else { return nil }
      return try reader.withRecord(at: head) { Array($0) }
    }
  }
}
