import Msglog

/// Where a connection is in its life, each part with what only it needs:
/// a body's budget while the body is read, the answer's keep-alive decision
/// and its stream while it is written. What holds for the whole connection
/// (its buffers, whether the peer ended its side, whether the server is
/// stopping) stays on `Connection`.
///
///     readingHead ─▶ (vetting ─▶) readingBody ─▶ handling ─▶ answering ─▶ readingHead, or lingering ─▶ closed
enum ConnectionState {
  /// Waiting for a request's head, due by then.
  case readingHead(due: Deadline)
  /// A worker is deciding who sent the request whose head was read, before
  /// its body is (`Connection.vet`), which is due by then with the body.
  case vetting(due: Deadline)
  /// Reading a request's body (its head is the decoder's), whose bytes
  /// are held in the server's budget.
  case readingBody(due: Deadline, reserved: Int)
  /// A worker is answering.
  case handling
  /// Writing an answer.
  case answering(Answer)
  /// The answer sent and the output shut; input dropped until the end or then.
  case lingering(until: Deadline)
  case closed

  /// An answer being written: its head and what is made of its body wait in
  /// the connection's output.
  struct Answer {
    /// Whether the connection closes once the answer is out.
    var closeAfter: Bool
    var body: Body

    enum Body {
      /// All of it is in the output.
      case complete
      /// The rest comes from its producer, a piece at a time.
      case streaming(StreamedBody)
    }
  }

  /// A streamed answer's body: a reference, so that what changes with
  /// each piece (what its producer is doing, when it last sent) changes in
  /// place rather than by rewriting the state around it.
  final class StreamedBody {
    let producer: any BodyProducer
    /// Chunked (HTTP/1.1), or ended by the close (HTTP/1.0).
    let chunked: Bool
    var pull = Pull.idle
    /// When it last sent anything, for its keep-alive comments.
    var lastSent = Deadline.now()
    /// When its producer was last asked whether it may go on while its
    /// client took nothing (`Connection.recheck`), and whether it is being.
    var recheckedAt = Deadline.now()
    var rechecking = false

    init(producer: any BodyProducer, chunked: Bool) {
      self.producer = producer
      self.chunked = chunked
    }

    /// What its producer is doing.
    enum Pull {
      /// Nothing: it is asked when the client has taken most of the last piece.
      case idle
      /// A worker is making its next piece.
      case asked
      /// An event stream with nothing to send, parked until the log's head
      /// reaches `seq`, and asked again at `recheckAt` even without a commit
      /// (`BodyProducer.recheckAfter`: a named token's follow, which a
      /// revocation must end).
      case parked(seq: UInt64, recheckAt: Deadline?)
      /// Asked again then (the workers' queue was full, or it said so).
      case retrying(at: Deadline)
    }
  }
}

extension ConnectionState {
  /// The answer being written, changed in place; nothing in another state.
  var answer: Answer? {
    get {
      guard case .answering(let answer) = self else { return nil }
      return answer
    }
    set {
      guard case .answering = self, let newValue else { return }
      self = .answering(newValue)
    }
  }

  /// The stream of the answer being written; nothing when there is none.
  var stream: StreamedBody? {
    guard case .answering(let answer) = self, case .streaming(let stream) = answer.body else { return nil }
    return stream
  }

  /// The stream's body has all been made: what is left is in the output.
  mutating func endStream() {
    answer?.body = .complete
  }

  /// The stream failed: what was sent is sent, no end follows, and the
  /// connection closes.
  mutating func cutStream() {
    answer?.body = .complete
    answer?.closeAfter = true
  }
}
