import Msglog
import MsglogWire

/// A response body written by a producer on a thread of its own and read by
/// the connection as the client takes it, through a buffer of bounded size:
/// however big the answer, a connection holds at most `capacity` bytes of it
/// plus what the producer is writing.
///
/// The producer blocks while the buffer is full, and gives up when the
/// client takes nothing for `stallLimit` seconds (a reader that stops must
/// not hold a read of the log open for ever) or when the connection goes.
package final class ResponseStream: Sendable {
  private struct State {
    var buffer: [UInt8] = []
    /// Bytes of `buffer` already read.
    var offset = 0
    /// The producer wrote something (or finished): the status is decided.
    var started = false
    var finished = false
    var failure: HTTPError?
    /// The connection went away (or the response was never sent).
    var cancelled = false
    var pending: Int { buffer.count - offset }
  }

  /// Why a producer stops: the connection went, or its client stalled.
  struct Abandoned: Error {}

  package static let capacity = 64 * 1024
  private let stallLimit: Double
  private let state = Guarded(State())

  private init(stallLimit: Double) { self.stallLimit = stallLimit }

  /// Runs `produce` on a thread of its own and returns once it has written
  /// its first bytes or ended — so that an error before the first byte is
  /// still answered with its own status (`HTTPError`) instead of a 200.
  package static func start(
    stallLimit: Double = 30, _ produce: @escaping @Sendable (Writer) throws -> Void
  ) throws(HTTPError) -> ResponseStream {
    let stream = ResponseStream(stallLimit: stallLimit)
    let started = startThread {
      let failure: HTTPError?
      do {
        try produce(Writer(stream: stream))
        failure = nil
      } catch let error as HTTPError {
        failure = error
      } catch is Abandoned {
        failure = HTTPError(status: 500, message: "the client went away")
      } catch let error as MsglogError {
        failure = HTTPError(error)
      } catch {
        failure = HTTPError(status: 500, message: "\(error)")
      }
      stream.state.update {
        $0.finished = true
        $0.failure = failure
      }
    }
    guard started else { throw HTTPError(status: 503, message: "the server cannot start another thread") }
    let failure = stream.state.wait(until: { $0.started || $0.finished }) { state, _ in
      state.started ? nil : state.failure
    }
    if let failure { throw failure }
    return stream
  }

  /// What the producer writes through.
  package struct Writer: Sendable {
    fileprivate let stream: ResponseStream

    /// Appends `bytes`, waiting while the buffer is full.
    package func write(_ bytes: [UInt8]) throws {
      var from = 0
      while from < bytes.count {
        from = try stream.accept(bytes, from: from)
      }
    }

    /// Writes what `json` holds and empties it (keeping its capacity).
    package func write(_ json: inout JSONWriter) throws {
      try write(json.bytes)
      json.removeAll()
    }
  }

  /// Takes as much of `bytes` from `from` as fits; returns where it stopped.
  private func accept(_ bytes: [UInt8], from: Int) throws -> Int {
    try state.wait(
      until: { $0.pending < Self.capacity || $0.cancelled }, deadline: .after(seconds: stallLimit)
    ) { state, ready in
      guard ready, !state.cancelled else { throw Abandoned() }
      if state.offset > 0 && state.offset == state.buffer.count {
        state.buffer.removeAll(keepingCapacity: true)
        state.offset = 0
      } else if state.offset >= Self.capacity {
        state.buffer.removeFirst(state.offset)
        state.offset = 0
      }
      let count = min(bytes.count - from, Self.capacity - state.pending)
      state.buffer.append(contentsOf: bytes[from..<(from + count)])
      state.started = true
      return from + count
    }
  }

  /// What `read` gives the connection.
  package enum Chunk: Equatable {
    case bytes(Int)
    case end
    case failed
  }

  /// Copies up to `max` bytes into `into`, waiting for the producer.
  package func read(into destination: UnsafeMutableRawPointer, max: Int) -> Chunk {
    state.wait(until: { $0.pending > 0 || $0.finished }) { state, _ in
      if state.pending == 0 { return state.failure == nil ? .end : .failed }
      let count = min(max, state.pending)
      state.buffer.withUnsafeBytes { raw in
        destination.copyMemory(from: raw.baseAddress! + state.offset, byteCount: count)
      }
      state.offset += count
      return .bytes(count)
    }
  }

  /// The connection is gone: the producer stops at its next write.
  package func cancel() { state.update { $0.cancelled = true } }

  /// Everything, read to the end (the in-process tests' reader); nil when
  /// the producer failed after starting.
  package func readAll() -> [UInt8]? {
    var all: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
      let result = chunk.withUnsafeMutableBytes { read(into: $0.baseAddress!, max: $0.count) }
      switch result {
      case .bytes(let count): all += chunk[..<count]
      case .end: return all
      case .failed: return nil
      }
    }
  }
}
