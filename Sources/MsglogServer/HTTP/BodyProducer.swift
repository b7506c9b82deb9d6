/// A response body made a piece at a time, when the connection asks: the
/// event loop asks for the next piece only once the client has taken most
/// of the last, so a client that reads nothing costs one piece, however
/// big the answer.
///
/// - Warning: `next()` runs on a worker thread, never on two at once, and
///   must not block (waiting for a commit is `.waitForCommit`).
package protocol BodyProducer: AnyObject, Sendable {
  func next() -> BodyChunk
  /// The connection is gone, or the body will not be sent (`HEAD`).
  func cancel()
  /// How long a `.waitForCommit` may last before `next()` is asked again
  /// without a commit; nil: until the commit.
  var recheckAfter: Double? { get }
  /// Whether the body may still be sent (a follow's token still live),
  /// asked every `recheckAfter` of a client that takes nothing, whose
  /// producer is not asked for more meanwhile. Runs on a worker, perhaps
  /// beside `next()`.
  func mayGoOn() -> Bool
}

extension BodyProducer {
  package var recheckAfter: Double? { nil }
  package func mayGoOn() -> Bool { true }
}

/// What a producer gives the connection.
package enum BodyChunk: Equatable {
  /// Bytes of the body; `last` when nothing follows.
  case bytes([UInt8], last: Bool)
  /// The body is complete.
  case end
  /// The body cannot be completed: the client sees a cut answer.
  case failed
  /// Nothing more until the log's head reaches this seq (an event stream).
  case waitForCommit(UInt64)
  /// Nothing now: ask again after this many seconds (the store went away).
  case retry(after: Double)
}
