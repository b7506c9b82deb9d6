import Msglog

/// A connection's answer: its head and body into the output, a streamed
/// body pulled from its producer a piece at a time, the output written as
/// the client takes it, then the next request or a lingering close.
extension Connection {
  // MARK: - Answers

  func send(_ response: Response, method: String, close: Bool, version: String = "HTTP/1.1") {
    var response = response
    answering(&response)
    let isHead = method == "HEAD"
    var body: any BodyProducer
    switch response.body {
    case .bytes(let bytes):
      let close = close || stopping || response.header("Connection") == "close"
      let noBody = response.status == 204 || response.status == 304
      output += ResponseHead.encode(
        status: response.status, contentType: noBody ? nil : response.contentType, headers: response.headers,
        delimiting: noBody ? .none : .length(bytes.count), close: close)
      if !isHead && !noBody { output += bytes }
      finishAnswer(close: close)
      return
    case .stream(let stream): body = stream
    case .events(let feed): body = feed
    }
    let chunked = version == "HTTP/1.1"
    let close = close || stopping || !chunked
    output += ResponseHead.encode(
      status: response.status, contentType: response.contentType, headers: response.headers,
      delimiting: chunked ? .chunked : .close, close: close)
    if isHead {
      body.cancel()
      finishAnswer(close: chunked ? close : true)
      return
    }
    state = .answering(.init(closeAfter: close, body: .streaming(.init(producer: body, chunked: chunked))))
    lastProgress = .now()
    flush()
  }

  /// An answer whose bytes are all in `output`.
  func finishAnswer(close: Bool) {
    state = .answering(.init(closeAfter: close, body: .complete))
    lastProgress = .now()
    flush()
  }

  /// Asks the producer for its next piece, when the client has taken most of the last.
  func pull() {
    guard let stream = state.stream, case .idle = stream.pull, output.count - outputStart < Self.lowWater
    else { return }
    stream.pull = .asked
    let producer = stream.producer
    let loop = self.loop
    let submitted = core.pool.submit { [self] in
      let chunk = producer.next()
      loop.execute { [self] in received(chunk) }
    }
    if !submitted { stream.pull = .retrying(at: .after(seconds: 0.1)) }
  }

  func received(_ chunk: BodyChunk) {
    guard let stream = state.stream, case .asked = stream.pull else { return }
    stream.pull = .idle
    let producer = stream.producer
    if outputStart > 0 {
      // What the client took goes before more is added: the output holds
      // at most what waits plus one piece, however long the answer.
      output.removeFirst(outputStart)
      outputStart = 0
    }
    switch chunk {
    case .bytes(let bytes, let last):
      appendBody(bytes)
      // Stopping, an event stream ends after its last complete event.
      if last || (stopping && producer is EventFeed) { endBody() }
    case .end:
      endBody()
    case .failed:
      // A cut answer: what was sent is sent, and no end follows.
      state.cutStream()
      producer.cancel()
    case .waitForCommit(let seq):
      if stopping {
        endBody()
      } else if core.commits.head < seq {
        stream.pull = .parked(seq: seq, recheckAt: producer.recheckAfter.map { .after(seconds: $0) })
        loop.park(self)
      }
    case .retry(let seconds):
      if stopping { endBody() } else { stream.pull = .retrying(at: .after(seconds: seconds)) }
    }
    flush()
  }

  func appendBody(_ bytes: [UInt8]) {
    guard !bytes.isEmpty, let stream = state.stream else { return }
    stream.lastSent = .now()
    if stream.chunked {
      output += Array((String(bytes.count, radix: 16) + "\r\n").utf8)
      output += bytes
      output += [13, 10]
    } else {
      output += bytes
    }
  }

  func endBody() {
    guard let stream = state.stream else { return }
    if stream.chunked { output += Array("0\r\n\r\n".utf8) }
    state.endStream()
    loop.unpark(self)
  }

  /// The log's head moved: an event stream waiting for it goes on.
  func headAdvanced(to head: UInt64) {
    guard let stream = state.stream, case .parked(let seq, _) = stream.pull, head >= seq else { return }
    stream.pull = .idle
    loop.unpark(self)
    pull()
  }

  // MARK: - Output

  /// Writes what the client will take now. Whenever that leaves less than
  /// `lowWater` waiting, the next piece of the body is asked for: the
  /// client taking bytes is what drives a streamed answer, so a client
  /// slower than the server still gets the whole of it (asking only when a
  /// piece came back stalled an answer for good once the socket's buffers
  /// filled: nothing was left to ask).
  func flush() {
    writing: while outputStart < output.count {
      let result = output.withUnsafeBytes { raw in
        transport.write(UnsafeRawBufferPointer(rebasing: raw[outputStart...]))
      }
      switch result {
      case .bytes(let count):
        outputStart += count
        written += count
        lastProgress = .now()
      case .wouldBlock:
        break writing
      case .ended:
        updateInterest()
        return
      case .failed:
        return close()
      }
    }
    if outputStart == output.count {
      output.removeAll(keepingCapacity: output.capacity <= Self.lowWater)
      outputStart = 0
      if let answer = state.answer, case .complete = answer.body { answerSent(closing: answer.closeAfter) }
      if case .closed = state { return }
    }
    pull()
    updateInterest()
  }

  /// The whole answer is out: the next request, or the end.
  func answerSent(closing: Bool) {
    endExchange()
    if closing || stopping || peerEnded {
      linger()
      return
    }
    state = .readingHead(due: .after(seconds: core.headerDeadline))
    processInput()
    // What TLS decrypted while this answer was under way is not announced again.
    if case .readingHead = state, transport.hasBufferedInput { readInput() }
  }

  /// Shuts the output and drops what the client still sends, for a moment,
  /// before closing: a close with unread input would reset the connection
  /// and could destroy the answer before the client read it.
  func linger() {
    releaseBody()
    transport.shutdownOutput()
    // Stopping, the process is about to end: a shorter moment.
    state = .lingering(until: .after(seconds: peerEnded ? 0 : stopping ? 0.5 : 2))
    if peerEnded { close() }
  }

  func close() {
    if case .closed = state { return }
    releaseBody()
    let unfinished = state.stream?.producer
    state = .closed
    endExchange()
    unfinished?.cancel()
    loop.forget(self, counted: counted)
    transport.close()
  }
}
