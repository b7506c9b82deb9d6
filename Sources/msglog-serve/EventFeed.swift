import CMicroHTTPD
import Msglog
import MsglogCLI
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// Tells the event streams that the log has grown: one follower for the
/// whole server (`EventLog.follow`, woken by the store, never by a timer)
/// publishes the head seq; each stream waits on it in its own thread.
final class CommitHub: @unchecked Sendable {
  private let log: EventLog
  private var mutex = pthread_mutex_t()
  private var changed = pthread_cond_t()
  private var head: UInt64 = 0
  private(set) var stopping = false
  private var stopPipe: [Int32] = [-1, -1]
  private var follower = pthread_t()
  private var following = false

  init(log: EventLog) {
    self.log = log
    pthread_mutex_init(&mutex, nil)
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
    pthread_cond_init(&changed, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(&changed)
    pthread_mutex_destroy(&mutex)
  }

  func start() {
    guard pipe(&stopPipe) == 0 else { return }
    head = (try? log.headSeq()) ?? 0
    let context = Unmanaged.passRetained(self).toOpaque()
    following = pthread_create(&follower, nil, { context in
      let hub = Unmanaged<CommitHub>.fromOpaque(context!).takeRetainedValue()
      hub.follow()
      return nil
    }, context) == 0
  }

  private func follow() {
    // A failed follow (the database went away) is retried: the streams
    // would otherwise wait for ever.
    while !isStopping {
      do {
        try log.follow(stop: [FollowStop(fileDescriptor: stopPipe[0], whenReadable: true)]) { event in
          publish(event.seq)
          return true
        }
      } catch {
        usleep(200_000)
      }
    }
  }

  private var isStopping: Bool {
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    return stopping
  }

  private func publish(_ seq: UInt64) {
    pthread_mutex_lock(&mutex)
    head = max(head, seq)
    pthread_cond_broadcast(&changed)
    pthread_mutex_unlock(&mutex)
  }

  /// Waits until the head reaches `seq`, the server stops, or `seconds`
  /// pass; true when the head reached it.
  func wait(for seq: UInt64, seconds: Int) -> Bool {
    var deadline = timespec()
    clock_gettime(CLOCK_MONOTONIC, &deadline)
    deadline.tv_sec += seconds
    pthread_mutex_lock(&mutex)
    defer { pthread_mutex_unlock(&mutex) }
    while head < seq && !stopping {
      if pthread_cond_timedwait(&changed, &mutex, &deadline) == ETIMEDOUT { break }
    }
    return head >= seq
  }

  func stop() {
    pthread_mutex_lock(&mutex)
    stopping = true
    pthread_cond_broadcast(&changed)
    pthread_mutex_unlock(&mutex)
    var byte: UInt8 = 1
    _ = write(stopPipe[1], &byte, 1)
    if following { pthread_join(follower, nil) }
    close(stopPipe[0])
    close(stopPipe[1])
  }
}

/// One Server-Sent Events stream: `id: SEQ` and `data: EVENT` (the
/// `log --json` object) per event of its stream, from `next` on, in seq
/// order and each once; a comment every 15 s keeps proxies from closing it.
/// Read by libmicrohttpd in the connection's own thread.
final class EventFeed {
  let server: HTTPServer
  let stream: StreamName?
  private var next: UInt64
  private var pending: [UInt8] = []
  private var offset = 0
  private var json = JSONWriter()

  init(server: HTTPServer, stream: StreamName?, next: UInt64) {
    self.server = server
    self.stream = stream
    self.next = next
    // Tell the client how long to wait before reconnecting.
    pending = Array("retry: 1000\n\n".utf8)
  }

  static let read: MHD_ContentReaderCallback = { context, _, buffer, max in
    let feed = Unmanaged<EventFeed>.fromOpaque(context!).takeUnretainedValue()
    return feed.fill(buffer!, max: max)
  }

  static let free: MHD_ContentReaderFreeCallback = { context in
    Unmanaged<EventFeed>.fromOpaque(context!).release()
  }

  private func fill(_ buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
    while offset == pending.count {
      pending.removeAll(keepingCapacity: true)
      offset = 0
      if server.commits.stopping { return -1 }  // MHD_CONTENT_READER_END_OF_STREAM
      let batch: [Event]
      do {
        batch = try server.log.events(from: next, limit: 512)
      } catch {
        return -2  // MHD_CONTENT_READER_END_WITH_ERROR
      }
      if batch.isEmpty {
        if !server.commits.wait(for: next, seconds: 15) && !server.commits.stopping {
          pending = Array(": keep-alive\n\n".utf8)
        }
        continue
      }
      for event in batch {
        guard event.seq == next else { return -2 }  // seqs are gapless: never skip one
        next += 1
        if let stream, event.stream != stream { continue }
        json.raw("id: ")
        json.raw(event.seq)
        json.raw("\ndata: ")
        json.event(event)
        json.raw("\n\n")
        pending.append(contentsOf: json.bytes)
        json.removeAll()
      }
    }
    let count = min(max, pending.count - offset)
    pending.withUnsafeBytes { raw in
      UnsafeMutableRawPointer(buffer).copyMemory(from: raw.baseAddress! + offset, byteCount: count)
    }
    offset += count
    return count
  }
}
