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
/// there unchecked and, if it is its own framed anew — the very event as
/// the erase or unsign left it, every field compared: its item's id,
/// time, stream, version and place, and the text an unsign keeps — pulls
/// without the check. The pull then brings the erase, and the replica's
/// record is framed as the remote's.
extension SyncRemote {
  /// Pulls `request`, whose check is of `held` (the replica's record at
  /// `request.after`), as above.
  func pull(_ request: PullRequest, holding held: [UInt8]?) throws -> RecordPage {
    do {
      return try pull(request)
    } catch let error as MsglogError where error.isAnotherLog {
      guard request.check != nil, let held, try holdsFramedAnew(held, at: request.after, of: request.log) else {
        throw error
      }
      var unchecked = request
      unchecked.check = nil
      return try pull(unchecked)
    }
  }

  /// Whether the remote's record at `seq` is `held`, a whole record,
  /// written again framed by an erase or an unsign: the very event, its
  /// sender taken off and, for an erase, its text (an unsign keeps it,
  /// and so it is compared). A failure to reach the remote is said as it
  /// is, not as another log.
  private func holdsFramedAnew(_ held: [UInt8], at seq: UInt64, of log: ItemID) throws -> Bool {
    guard seq > 0, EventRecord.layout(of: held) == .whole, let mine = try? EventRecord.decode(held) else {
      return false
    }
    let theirs: (bytes: [UInt8], event: Event)?
    do {
      theirs = try record(at: seq, of: log)
    } catch let error as MsglogError where error.isAnotherLog {
      return false
    }
    guard let (bytes, event) = theirs, EventRecord.layout(of: bytes) == .framed, let erase = event.erased else {
      return false
    }
    return event == mine.blanked(at: erase, keepingText: true) || event == mine.blanked(at: erase, keepingText: false)
  }
}

extension Event {
  /// The event as an erase at seq `erase` leaves it (no sender, no text),
  /// or an unsign (`keepingText`); nil for an event with no text.
  fileprivate func blanked(at erase: UInt64, keepingText: Bool) -> Event? {
    var event = self
    switch op {
    case .insert(let id, let index, let text, _):
      event.op = .insert(id: id, index: index, text: keepingText ? text : "", sender: nil)
    case .edit(let id, let text, _, let index, let replaces, let inserted):
      event.op = .edit(
        id: id, text: keepingText ? text : "", sender: nil, index: index, replaces: replaces, inserted: inserted)
    case .remove, .move, .restore, .erase, .unsign:
      return nil
    }
    event.erased = erase
    return event
  }
}
