import MsglogHTTPWire

/// An answer whose head has arrived and whose body is read as it comes:
/// a pull's page applied while the rest is on its way, an event stream
/// for as long as the server keeps it open.
///
/// Read it on one thread. When the body has been read to its end, its
/// connection goes back to the client for the next request; `close()` (or
/// dropping the stream) before that closes the connection instead.
package final class HTTPResponseStream {
  package let head: HTTPResponseHead
  package var status: Int { head.status }
  /// The server, as messages name it.
  package var origin: String { client.url.origin }

  private enum Body {
    case length(remaining: Int)
    case chunked(ChunkedDecoder)
    case untilClose
    case finished
  }

  private var body: Body
  private var connection: Connection?
  private let keepAlive: Bool
  private let idle: Double
  /// The bound on the whole exchange, until the body's end.
  private let exchange: ExchangeDeadline?
  private let client: HTTPClient
  /// What broke the stream, thrown again by any later read.
  private var failure: HTTPClientError?

  init(
    head: HTTPResponseHead, framing: BodyFraming, connection: Connection, keepAlive: Bool, idle: Double,
    exchange: ExchangeDeadline?, client: HTTPClient
  ) {
    self.exchange = exchange
    self.head = head
    self.connection = connection
    self.keepAlive = keepAlive && framing != .untilClose
    self.idle = idle
    self.client = client
    switch framing {
    case .none: body = .finished
    case .length(let length): body = length == 0 ? .finished : .length(remaining: length)
    case .chunked: body = .chunked(ChunkedDecoder())
    case .untilClose: body = .untilClose
    }
    if case .finished = body { finish() }
  }

  deinit { connection = nil }

  /// Whether the body has been read to its end.
  package var isFinished: Bool {
    if case .finished = body { return true }
    return false
  }

  /// The next piece of the body as it arrived (never empty), waiting for
  /// it at most the idle timeout (and no later than the exchange's bound);
  /// nil once the body has ended.
  package func next() throws -> [UInt8]? {
    if let failure { throw failure }
    do {
      return try read()
    } catch let error as HTTPClientError {
      failure = error
      connection = nil
      body = .finished
      throw error
    }
  }

  /// The rest of the body, at most `limit` bytes (more: `.answerTooLarge`,
  /// and the connection is closed).
  package func readAll(limit: Int) throws -> [UInt8] {
    var all: [UInt8] = []
    while let piece = try next() {
      guard all.count + piece.count <= limit else {
        close()
        failure = .answerTooLarge(origin: client.url.origin, limit: limit)
        throw failure!
      }
      all += piece
    }
    return all
  }

  /// Stops reading: the connection is closed (the rest of the body is
  /// never read), and a later `next()` returns nil.
  package func close() {
    connection = nil
    body = .finished
  }

  private func read() throws -> [UInt8]? {
    guard let connection else { return nil }
    let origin = connection.origin
    while true {
      switch body {
      case .finished:
        return nil
      case .length(let remaining):
        if !connection.buffered.isEmpty {
          let piece = Array(connection.buffered.prefix(remaining))
          connection.take(piece.count)
          body = remaining == piece.count ? .finished : .length(remaining: remaining - piece.count)
          if remaining == piece.count { finish() }
          return piece
        }
        if case .more = try connection.fill(idle: idle, by: exchange) { continue }
        throw HTTPClientError.connectionLost(
          origin: origin, reason: "closed the connection before the end of the answer (\(remaining) bytes short)")
      case .chunked(var decoder):
        if !connection.buffered.isEmpty {
          var piece: [UInt8] = []
          let taken: Int
          do {
            taken = try connection.buffered.withUnsafeBytes { bytes in
              try decoder.decode(bytes) { piece.append(contentsOf: $0) }
            }
          } catch let error as HTTPSyntaxError {
            throw HTTPClientError.malformedAnswer(origin: origin, reason: error.reason)
          }
          connection.take(taken)
          body = .chunked(decoder)
          if decoder.isDone {
            finish()
            return piece.isEmpty ? nil : piece
          }
          if !piece.isEmpty { return piece }
          continue
        }
        if case .more = try connection.fill(idle: idle, by: exchange) { continue }
        throw HTTPClientError.connectionLost(
          origin: origin, reason: "closed the connection before the end of the answer (in its chunked body)")
      case .untilClose:
        if !connection.buffered.isEmpty {
          let piece = Array(connection.buffered)
          connection.take(piece.count)
          return piece
        }
        switch try connection.fill(idle: idle, by: exchange) {
        case .more: continue
        case .closed:
          finish()
          return nil
        case .closedWithoutTLSEnd:
          throw HTTPClientError.connectionLost(
            origin: origin, reason: "closed the connection without ending TLS: the answer may have been cut")
        }
      }
    }
  }

  /// The body has ended: the connection goes back to the client if it can
  /// carry another request.
  private func finish() {
    body = .finished
    guard let connection else { return }
    self.connection = nil
    // Bytes after the body that no request asked for: the stream is out of step.
    if keepAlive, connection.buffered.isEmpty { client.checkIn(connection) }
  }
}
