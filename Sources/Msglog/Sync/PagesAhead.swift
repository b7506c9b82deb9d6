import MsglogCore

/// A bulk clone's pages, pulled one ahead on a thread of their own and
/// checked there (`EventLog.events(of:after:from:)`): the remote reads and sends
/// page N+1 while this process builds page N. One page after another, a
/// clone of 1,000,000 events through `serve` took 1.23× `export | import`
/// on 2 cores, the remote idle while the replica built and the other way
/// round; pulled ahead, 0.89× (`scripts/bench --sync`).
///
/// Only the pulling thread uses the remote until `stop` returns; at most
/// `depth` pages wait, so a fast remote costs no more memory than that.
final class PagesAhead: @unchecked Sendable {
  /// What `next` gives: a page and its events, the end (the remote's head
  /// reached and borne out), or why pulling stopped.
  enum Next {
    case page(RecordPage, [Event])
    case end
    case failed(any Error)
  }

  static let depth = 2

  private struct Queue {
    var ready: [Next] = []
    var stopped = false
    var pulling = true
  }

  private let queue = Guarded(Queue())
  // No `EventLog` here: the thread outlives `stop` by a moment, and the
  // replica's must close before the clone puts its directory in place.
  private let remote: any SyncRemote
  private let logID: ItemID

  /// Starts pulling from seq 1; nil when no thread could be started.
  init?(remote: any SyncRemote, logID: ItemID) {
    self.remote = remote
    self.logID = logID
    guard startThread({ [self] in pull() }) else { return nil }
  }

  /// The next page (waiting for it), the end, or the failure.
  func next() -> Next {
    queue.wait(until: { !$0.ready.isEmpty }) { queue, _ in queue.ready.removeFirst() }
  }

  /// Has the thread stop after the pull it is in, and waits until it has:
  /// the remote is the caller's again.
  func stop() {
    queue.update { $0.stopped = true }
    queue.wait(until: { !$0.pulling }, wakingOthers: false) { _, _ in }
  }

  private func pull() {
    defer { queue.update { $0.pulling = false } }
    var head: UInt64 = 0
    var held: [UInt8]? = nil
    while queue.wait(until: { $0.stopped || $0.ready.count < Self.depth }, then: { queue, _ in !queue.stopped }) {
      let next: Next
      do {
        let check = held?.withUnsafeBytes(EventRecord.headCheck)
        let page = try remote.pull(PullRequest(log: logID, after: head, check: check), holding: held)
        if page.records.isEmpty {
          guard page.head == head else {
            throw MsglogError.remoteFault(remote: remote.shown, .headNotBorneOut(claimed: page.head, seq: head))
          }
          next = .end
        } else {
          let events = try EventLog.events(of: page, after: head, from: remote)
          head = events.last!.seq
          held = page.records.last!
          next = .page(page, events)
        }
      } catch {
        next = .failed(error)
      }
      queue.update { $0.ready.append(next) }
      guard case .page = next else { return }
    }
  }
}
