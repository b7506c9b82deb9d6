import Msglog
import MsglogWire
import Synchronization

/// A response body written by a producer a piece at a time, as the client
/// takes it (`BodyProducer`): each piece is about `capacity` bytes (plus at
/// most what one call of the producer adds past it), so however big the
/// answer, a connection holds one piece of it.
package final class ResponseStream: BodyProducer, @unchecked Sendable {  // `produce` and `json`: one worker at a time
  /// Writes the next piece into the writer; returns false once that was the last.
  package typealias Produce = (inout JSONWriter) throws -> Bool

  package static let capacity = 64 * 1024
  private let produce: Produce
  private var json = JSONWriter()
  private var finished = false
  private let cancelled = Atomic(false)

  private init(_ produce: @escaping Produce) { self.produce = produce }

  /// Runs `produce` until it has written its first bytes or ended — so that
  /// an error before the first byte is still answered with its own status
  /// (`HTTPError`) instead of a 200.
  package static func start(_ produce: @escaping Produce) throws(HTTPError) -> ResponseStream {
    let stream = ResponseStream(produce)
    do {
      while !stream.finished && stream.json.bytes.isEmpty {
        stream.finished = try !produce(&stream.json)
      }
    } catch {
      throw HTTPError(describing: error)
    }
    return stream
  }

  package func next() -> BodyChunk {
    if cancelled.load(ordering: .relaxed) { return .failed }
    do {
      while !finished && json.bytes.count < Self.capacity {
        finished = try !produce(&json)
      }
    } catch {
      return .failed
    }
    let piece = json.bytes
    json.removeAll()
    return .bytes(piece, last: finished)
  }

  package func cancel() { cancelled.store(true, ordering: .relaxed) }

  /// Everything, read to the end (the in-process tests' reader); nil when
  /// the producer failed after starting.
  package func readAll() -> [UInt8]? {
    var all: [UInt8] = []
    while true {
      switch next() {
      case .bytes(let bytes, let last):
        all += bytes
        if last { return all }
      case .end: return all
      case .failed, .waitForCommit, .retry: return nil
      }
    }
  }
}
