import Msglog
import MsglogWire
import Synchronization

/// One Server-Sent Events stream: `id: SEQ` and `data: EVENT` (the
/// `log --json` object) per event of its stream, from `nextSeq` on, in seq
/// order and each once. Pulled by its connection (`BodyProducer`): each
/// piece is the events committed since the last, whole; with none, the
/// connection is parked in its event loop until `CommitHub` sees the head
/// pass `next` (a `: keep-alive` comment every 15 s is the loop's).
package final class EventFeed: BodyProducer, @unchecked Sendable {  // `nextSeq` and `opened`: one worker at a time
  let log: EventLog
  let commits: CommitHub
  let stream: StreamName?
  /// Who follows: a named token gets only the streams it may read.
  let caller: Caller
  /// Asked by a follow opened without a token whether the log holds
  /// tokens now (nil: never; the tests' feeds).
  let gate: TokenGate?
  /// Where a follow cut by a failure says why (nil: the tests' feeds).
  let warnings: ServerLog?
  private var nextSeq: UInt64
  /// Whether `nextSeq` is still the `from` the client asked for, nothing
  /// read yet (`LogSnapshot.firstEvent(from:asked:)`).
  private var fromAsked: Bool
  private var opened = false
  private let cancelled = Atomic(false)

  /// The events read at once are at most this many bytes (plus one event):
  /// a stream's memory does not grow with the size of the backlog.
  static let batchBytes = 256 * 1024

  init(
    log: EventLog, commits: CommitHub, stream: StreamName?, next: UInt64, fromAsked: Bool = false,
    caller: Caller = .open, gate: TokenGate? = nil, warnings: ServerLog? = nil
  ) {
    self.log = log
    self.commits = commits
    self.stream = stream
    self.caller = caller
    self.gate = gate
    self.warnings = warnings
    self.nextSeq = next
    self.fromAsked = fromAsked
  }

  package func cancel() { cancelled.store(true, ordering: .relaxed) }

  /// A named token's follow is asked again every half second while it
  /// waits for a commit, so that a revocation or an expiry ends it within
  /// a second (the loop's tick is a quarter): the one wake-up besides the
  /// store's commit notification — a token's revocation appends no event,
  /// so no commit would wake it. So is a follow opened without a token
  /// (the log held none then), which the first `token add` ends.
  package var recheckAfter: Double? {
    switch caller {
    case .named: return 0.5
    case .open: return gate == nil ? nil : 0.5
    case .operatorToken: return nil
    }
  }

  /// Whether the follower may still follow, asked after the events of a
  /// piece were read and before any is sent: what was read was committed
  /// before this answer, so before any revocation it did not see — no
  /// event committed after the revocation is sent. A named token: still
  /// live. No token: the log still holds none (the gate's answer, which
  /// stands a quarter second for all such follows, so thousands of them
  /// ask the log no more often than one).
  private func mayStillFollow() -> Bool {
    switch caller {
    case .named(let token):
      let now: NamedToken?
      do {
        now = try log.namedToken(id: token.id)
      } catch let error as MsglogError where EventLog.isLostStore(error) {
        // Not answered now (a restart, a standby's cancelled read): asked
        // again at the next piece or recheck, half a second on.
        return true
      } catch {
        return false
      }
      return now?.standing(at: Timestamp.now()) == .live
    case .open:
      guard let gate else { return true }
      return (try? gate.logHoldsTokens(presented: false)) != true
    case .operatorToken:
      return true
    }
  }

  /// Asked while the client takes nothing: the same question.
  package func mayGoOn() -> Bool { mayStillFollow() }

  package func next() -> BodyChunk {
    if cancelled.load(ordering: .relaxed) || commits.isStopping { return .end }
    var json = JSONWriter()
    if !opened {
      // Tell the client how long to wait before reconnecting.
      json.raw("retry: 1000\n\n")
      opened = true
    } else if commits.head < nextSeq {
      // Woken by the recheck, not by a commit: nothing new to read (a
      // commit the hub has not seen yet wakes this follow when it does).
      return mayStillFollow() ? .waitForCommit(nextSeq) : .end
    }
    do {
      try readBatch(into: &json)
    } catch let error as MsglogError where EventLog.isLostStore(error) {
      // The server went away (a restart), or cancelled the read (a
      // standby's recovery conflict): the stream stays open and reads
      // again shortly, from where it was.
      if json.bytes.isEmpty {
        if case .readCancelled = error { return .retry(after: 0.05) }  // the standby is there
        return .retry(after: 0.5)
      }
    } catch {
      // The client sees only a cut stream (and reconnects from its last
      // event): the operator is told why.
      warnings?.warn("follow", "a follow was cut at seq \(nextSeq): \(error)")
      return .failed
    }
    guard mayStillFollow() else { return .end }
    if json.bytes.isEmpty { return .waitForCommit(nextSeq) }
    return .bytes(json.take(), last: false)
  }

  /// The next events into `json`, up to `batchBytes`.
  private func readBatch(into json: inout JSONWriter) throws {
    var batch: [Event] = []
    var bytes = 0
    try log.read { snapshot in
      batch.removeAll(keepingCapacity: true)
      bytes = 0
      // History trimmed away under the follower: it reloads (410 at the start).
      let first = try snapshot.firstEvent(from: nextSeq, asked: fromAsked)
      try snapshot.forEachEvent(from: first) { event in
        batch.append(event)
        if case .insert(_, _, let text, _) = event.op { bytes += text.utf8.count }
        return bytes < Self.batchBytes && batch.count < 512
      }
      (nextSeq, fromAsked) = (first, false)
    }
    for event in batch {
      guard event.seq == nextSeq else {
        throw MsglogError.corruptedLog("expected seq \(nextSeq), found \(event.seq)")
      }
      nextSeq += 1
      if let stream, event.stream != stream { continue }
      if stream == nil, !caller.may(.read, event.stream) { continue }
      json.raw("id: ")
      json.raw(event.seq)
      json.raw("\ndata: ")
      json.event(event)
      json.raw("\n\n")
    }
  }
}
