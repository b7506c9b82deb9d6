import CEpoll
import Msglog
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// One thread that owns a share of the connections and waits on all of
/// them at once (epoll): reading requests, writing answers, parking event
/// streams until a commit, enforcing deadlines — never blocking on any one
/// client. Other threads reach it by `execute` (an eventfd wakes it).
final class EventLoop: @unchecked Sendable {  // everything but `inbox` and the atomics: the loop's own thread
  let core: ServerCore
  let epoll: Int32
  private let wake: Int32
  private let inbox = Mutex<[@Sendable () -> Void]>([])
  private let wakePending = Atomic(false)
  private let advancePending = Atomic(false)
  /// Connections it owns, by socket.
  private var connections: [Int32: Connection] = [:]
  /// Event streams waiting for the head to reach a seq.
  private var parked: [ObjectIdentifier: Connection] = [:]
  /// The listening socket, on the loop that accepts.
  var listener: Listener?
  private var ended = false
  private let open = Atomic(0)
  /// Set once the loop's thread has returned.
  let finished = Guarded(false)
  /// Where its connections read into (the loop's thread only).
  let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
  /// How often deadlines, stalls and keep-alives are looked at.
  static let tick: Double = 0.25

  init(core: ServerCore) throws(ServerError) {
    self.core = core
    // Both kept only once both are made: a failed init of an object whose
    // properties are all set still runs its deinit, which closes them.
    let epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard epoll >= 0 else { throw ServerError("cannot make an epoll: \(String(cString: strerror(errno)))") }
    let wake = eventfd(0, Int32(EFD_NONBLOCK) | Int32(EFD_CLOEXEC))
    guard wake >= 0 else {
      close(epoll)
      throw ServerError("cannot make an eventfd: \(String(cString: strerror(errno)))")
    }
    (self.epoll, self.wake) = (epoll, wake)
    register(wake, Self.readable)
  }

  deinit {
    scratch.deallocate()
    close(wake)
    close(epoll)
  }

  /// Connections it holds now (any thread).
  var connectionCount: Int { open.load(ordering: .relaxed) }

  // MARK: - From other threads

  /// Runs `task` on the loop's thread, soon.
  func execute(_ task: @escaping @Sendable () -> Void) {
    inbox.withLock { $0.append(task) }
    if !wakePending.exchange(true, ordering: .acquiringAndReleasing) {
      var one: UInt64 = 1
      _ = Glibc.write(wake, &one, 8)
    }
  }

  /// The log's head moved: resume the streams waiting for it (once for
  /// many commits in a row).
  func headAdvanced() {
    guard !advancePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
    execute { [self] in
      advancePending.store(false, ordering: .releasing)
      resumeParked()
    }
  }

  /// Takes a connection accepted elsewhere.
  func adopt(_ fd: Int32, address: [UInt8], refusal: HTTPError? = nil) {
    execute { [self] in
      let transport: any Transport
      if let tls = core.tls {
        guard let session = TLSTransport(fd: fd, credentials: tls) else {
          core.warnings.warn("tls", "cannot make a TLS session: closing the connection")
          if refusal == nil { core.count.remove(core.proxies.trusts(address) ? nil : address) }
          Glibc.close(fd)
          return
        }
        transport = session
      } else {
        transport = SocketTransport(fd: fd)
      }
      let connection = Connection(transport: transport, address: address, loop: self)
      connections[fd] = connection
      if refusal == nil { _ = open.wrappingAdd(1, ordering: .relaxed) }
      register(fd, Self.readable | UInt32(EPOLLRDHUP.rawValue))
      connection.start(refusing: refusal)
    }
  }

  // MARK: - The loop's thread

  static let readable = UInt32(EPOLLIN.rawValue)
  static let writable = UInt32(EPOLLOUT.rawValue)

  func run() {
    var events = [epoll_event](repeating: epoll_event(), count: 256)
    var nextTick = Deadline.after(seconds: Self.tick)
    while !ended {
      let count = epoll_wait(epoll, &events, Int32(events.count), Int32(max(1, nextTick.millisecondsLeft)))
      if count > 0 {
        for i in 0..<Int(count) {
          let fd = events[i].data.fd
          let flags = events[i].events
          if fd == wake {
            drainInbox()
          } else if let listener, fd == listener.fd {
            listener.acceptAll()
          } else if let connection = connections[fd] {
            connection.handle(flags)
          }
        }
      }
      if nextTick.hasPassed {
        tick()
        nextTick = .after(seconds: Self.tick)
      }
    }
    for connection in Array(connections.values) { connection.close() }
    finished.update { $0 = true }
  }

  private func drainInbox() {
    var value: UInt64 = 0
    _ = Glibc.read(wake, &value, 8)
    wakePending.store(false, ordering: .releasing)
    let tasks = inbox.withLock { inbox in
      defer { inbox.removeAll(keepingCapacity: true) }
      return inbox
    }
    for task in tasks { task() }
  }

  private func tick() {
    let now = Deadline.now()
    listener?.tick(now)
    for connection in Array(connections.values) { connection.tick(now) }
  }

  /// Ends the loop once its connections are gone (after `stop`'s drain).
  func end() { execute { [self] in ended = true } }

  // MARK: - For its connections

  func register(_ fd: Int32, _ flags: UInt32) {
    var event = epoll_event()
    event.events = flags
    event.data.fd = fd
    epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &event)
  }

  func modify(_ fd: Int32, _ flags: UInt32) {
    var event = epoll_event()
    event.events = flags
    event.data.fd = fd
    epoll_ctl(epoll, EPOLL_CTL_MOD, fd, &event)
  }

  func unregister(_ fd: Int32) {
    epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nil)
  }

  /// A connection closed: forget it (before its socket is closed, so that
  /// a new connection given the same number is another's).
  func forget(_ connection: Connection, counted: Bool) {
    unregister(connection.transport.fd)
    connections[connection.transport.fd] = nil
    parked[ObjectIdentifier(connection)] = nil
    if counted {
      _ = open.wrappingSubtract(1, ordering: .relaxed)
      core.count.remove(connection.countedUnder)
    }
  }

  func park(_ connection: Connection) { parked[ObjectIdentifier(connection)] = connection }
  func unpark(_ connection: Connection) { parked[ObjectIdentifier(connection)] = nil }

  private func resumeParked() {
    let head = core.commits.head
    for connection in Array(parked.values) { connection.headAdvanced(to: head) }
  }

  /// Stopping: every connection finishes what it must and closes.
  func beginStopping() {
    execute { [self] in
      listener?.close()
      listener = nil
      for connection in Array(connections.values) { connection.beginStopping() }
    }
  }
}
