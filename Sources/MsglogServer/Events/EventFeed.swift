import Msglog
import MsglogWire

/// One Server-Sent Events stream: `id: SEQ` and `data: EVENT` (the
/// `log --json` object) per event of its stream, from `next` on, in seq
/// order and each once; a comment every 15 s keeps proxies from closing it.
/// Read by the connection in its own thread, which waits here for commits.
package final class EventFeed: @unchecked Sendable {  // used by one connection's thread at a time
  let log: EventLog
  let commits: CommitHub
  let stream: StreamName?
  private var next: UInt64
  /// Written and not yet read, from `offset` on.
  private var pending: [UInt8] = []
  private var offset = 0
  private var json = JSONWriter()
  private let cancelled = Guarded(false)

  /// The events read at once are at most this many bytes (plus one event):
  /// a stream's memory does not grow with the size of the backlog.
  static let batchBytes = 256 * 1024

  init(log: EventLog, commits: CommitHub, stream: StreamName?, next: UInt64) {
    self.log = log
    self.commits = commits
    self.stream = stream
    self.next = next
    // Tell the client how long to wait before reconnecting.
    json.raw("retry: 1000\n\n")
  }

  /// The connection is gone, or the response will not be sent (`HEAD`).
  func cancel() { cancelled.update { $0 = true } }

  /// Copies up to `max` bytes of the stream into `destination`, waiting for
  /// the next commit when everything so far was sent.
  func read(into destination: UnsafeMutableRawPointer, max: Int) -> ResponseStream.Chunk {
    while offset == pending.count {
      pending.removeAll(keepingCapacity: true)
      offset = 0
      if commits.isStopping || cancelled.read({ $0 }) { return .end }
      if json.bytes.isEmpty {
        do {
          try readBatch()
        } catch {
          return .failed
        }
      }
      if json.bytes.isEmpty {
        if !commits.wait(for: next, seconds: 15) && !commits.isStopping { json.raw(": keep-alive\n\n") }
        continue
      }
      pending.append(contentsOf: json.bytes)
      json.removeAll()
    }
    let count = min(max, pending.count - offset)
    pending.withUnsafeBytes { raw in destination.copyMemory(from: raw.baseAddress! + offset, byteCount: count) }
    offset += count
    return .bytes(count)
  }

  /// The next events into `json`, up to `batchBytes`.
  private func readBatch() throws {
    var batch: [Event] = []
    var bytes = 0
    try log.read { snapshot in
      batch.removeAll(keepingCapacity: true)
      bytes = 0
      try snapshot.forEachEvent(from: next) { event in
        batch.append(event)
        if case .insert(_, _, let text, _) = event.op { bytes += text.utf8.count }
        return bytes < Self.batchBytes && batch.count < 512
      }
    }
    for event in batch {
      guard event.seq == next else { throw MsglogError.corruptedLog("expected seq \(next), found \(event.seq)") }
      next += 1
      if let stream, event.stream != stream { continue }
      json.raw("id: ")
      json.raw(event.seq)
      json.raw("\ndata: ")
      json.event(event)
      json.raw("\n\n")
    }
  }
}
