import MsglogHTTPWire

/// Requests decoded incrementally from a connection's bytes, one after
/// another (pipelined requests in order): the head first — which the
/// connection judges before taking any of the body (`readBody(of:)`, or an
/// answer and a close) — then the body, by its framing.
package struct RequestDecoder {
  private enum State {
    case head
    /// A head was given out; the connection has not said yet whether to read its body.
    case judging
    case length(RequestHead, remaining: Int)
    case chunked(RequestHead, ChunkedDecoder)
    /// A refusal was given out: nothing more is read as a request.
    case stopped
  }

  package enum Event {
    /// A head, judged by the connection before the body is read.
    case head(RequestHead)
    /// A whole request.
    case request(RequestHead, body: [UInt8])
    /// The answer, which ends the connection.
    case refused(HTTPError)
  }

  private var state = State.head
  private var body: [UInt8] = []
  let bodyLimit: Int

  /// A chunk's size line (with its extensions) and the trailer, at most.
  package static let chunkLineLimit = 4096
  package static let trailerLimit = 8192

  package init(bodyLimit: Int) { self.bodyLimit = bodyLimit }

  /// Bytes of the body taken so far.
  package var bodyCount: Int { body.count }

  /// Whether a body is being read.
  package var isReadingBody: Bool {
    switch state {
    case .length, .chunked: return true
    default: return false
    }
  }

  /// Decodes from `input`: how many bytes were taken, and what they made,
  /// if anything yet.
  package mutating func decode(_ input: UnsafeRawBufferPointer) -> (taken: Int, event: Event?) {
    switch state {
    case .judging, .stopped:
      return (0, nil)
    case .head:
      switch RequestHead.parse(input) {
      case .incomplete: return (0, nil)
      case .refused(let error):
        state = .stopped
        return (0, .refused(error))
      case .head(let head, let length):
        state = .judging
        return (length, .head(head))
      }
    case .length(let head, let remaining):
      let count = min(remaining, input.count)
      body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[..<count]))
      if count < remaining {
        state = .length(head, remaining: remaining - count)
        return (count, nil)
      }
      return (count, finish(head))
    case .chunked(let head, var decoder):
      do {
        let taken = try decoder.decode(input) { body.append(contentsOf: $0) }
        guard decoder.isDone else {
          state = .chunked(head, decoder)
          return (taken, nil)
        }
        return (taken, finish(head))
      } catch {
        state = .stopped
        // The same words as a Content-Length over the bound (`Connection`).
        let refusal =
          error.fault == .bodyTooLarge
          ? HTTPError(
            status: 413, message: "the request body is over \(bodyLimit) bytes", headers: [("Connection", "close")])
          : HTTPError(error)
        return (input.count, .refused(refusal))
      }
    }
  }

  /// The connection judged `head` and reads its body now; a request with
  /// no body is whole at once (returned).
  package mutating func readBody(of head: RequestHead) -> Event? {
    switch head.framing {
    case .none, .length(0): return finish(head)
    case .length(let count): state = .length(head, remaining: count)
    case .chunked:
      state = .chunked(
        head, ChunkedDecoder(lineLimit: Self.chunkLineLimit, trailerLimit: Self.trailerLimit, bodyLimit: bodyLimit))
    }
    return nil
  }

  /// The connection answers `head` without its body, and closes.
  package mutating func stop() { state = .stopped }

  private mutating func finish(_ head: RequestHead) -> Event {
    state = .head
    defer { body = [] }
    return .request(head, body: body)
  }
}
