import Msglog

/// What time and stopping do to a connection: deadlines for a head and a
/// body, the stall limit, keep-alive comments on a parked stream, the end
/// of a linger, and what a stopping server asks of it.
extension Connection {
  // MARK: - Time

  func tick(_ now: Deadline) {
    switch state {
    case .readingHead(let due) where due <= now:
      // Nothing begun: an idle connection ends quietly; part of a head gets a 408.
      guard inputStart < input.count else { return close() }
      decoder.stop()
      send(
        .error(
          HTTPError(status: 408, message: "the request's head did not arrive within \(Int(core.headerDeadline)) s")),
        method: "GET", close: true)
    case .vetting(let due) where due <= now:
      // The token's lookup outlasted the body's time (the store away):
      // the body was not read, and the connection closes.
      decoder.stop()
      send(
        .error(HTTPError(status: 503, message: "the server could not check the token in time; retry shortly")),
        method: "GET", close: true)
    case .readingBody(let due, _) where due <= now:
      decoder.stop()
      releaseBody()
      send(
        .error(HTTPError(status: 408, message: "the request's body did not arrive within \(Int(core.bodyDeadline)) s")),
        method: "GET", close: true)
    case .lingering(let until) where until <= now:
      close()
    case .answering:
      if outputStart < output.count {
        // The socket is full: the client still takes what it holds, or takes nothing.
        let unsent = transport.unsentBytes
        if let unsent, let before = unsentAtTick, unsent < before { lastProgress = now }
        unsentAtTick = unsent
        if now.nanoseconds(since: lastProgress) > UInt64(core.stallLimit * 1e9) {
          return close()  // a client that takes nothing does not hold its answer for ever
        }
        if let stream = state.stream, let every = stream.producer.recheckAfter, !stream.rechecking,
          now.nanoseconds(since: stream.recheckedAt) > UInt64(every * 1e9),
          now.nanoseconds(since: lastProgress) > UInt64(every * 1e9)
        {
          recheck(stream)
        }
      }
      guard let stream = state.stream else { return }
      switch stream.pull {
      case .retrying(let at) where at <= now:
        stream.pull = .idle
        pull()
      case .parked(_, let at?) where at <= now:
        // Parked without a commit for its deadline: asked again (it ends
        // if its token was revoked), then parked again.
        stream.pull = .idle
        loop.unpark(self)
        pull()
      default: break
      }
      if let stream = state.stream, case .parked = stream.pull,
        now.nanoseconds(since: stream.lastSent) > UInt64(Self.keepAliveInterval * 1e9)
      {
        appendBody(Array(": keep-alive\n\n".utf8))
        flush()
      }
    default: break
    }
  }

  /// A stream whose client takes nothing is not asked for more, so it
  /// would not learn that its token was revoked until the client read
  /// again or the stall limit: its producer is asked on a worker whether
  /// it may go on, and the connection closed if not (what the kernel holds
  /// already goes, all of it committed before the revocation).
  func recheck(_ stream: ConnectionState.StreamedBody) {
    stream.rechecking = true
    stream.recheckedAt = .now()
    let producer = stream.producer
    let loop = self.loop
    let submitted = core.pool.submit { [self] in
      let goesOn = producer.mayGoOn()
      loop.execute { [self] in
        // The same answer still under way (its producer, held here, is its own).
        guard let current = state.stream, current.producer === producer else { return }
        current.rechecking = false
        if !goesOn { close() }
      }
    }
    if !submitted { stream.rechecking = false }
  }

  /// Stopping: an idle connection closes now; a request read is answered
  /// (and the connection closed after); an event stream ends after its
  /// last complete event.
  func beginStopping() {
    stopping = true
    switch state {
    case .readingHead:
      close()
    case .answering:
      guard let stream = state.stream else { break }
      switch stream.pull {
      case .parked, .retrying:
        endBody()
        flush()
      case .idle where stream.producer is EventFeed:
        endBody()
        flush()
      case .idle, .asked: break
      }
    default: break
    }
  }
}
