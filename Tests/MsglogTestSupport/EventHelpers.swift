import Foundation
import Msglog
import MsglogWire
import Synchronization

/// A clock a test sets by hand.
public final class TestClock: Sendable {
  private let milliseconds = Mutex<Int64>(1000)

  public init(_ milliseconds: Int64 = 1000) { self.milliseconds.withLock { $0 = milliseconds } }

  public func set(_ value: Int64) { milliseconds.withLock { $0 = value } }

  @Sendable public func now() -> Timestamp { Timestamp(milliseconds: milliseconds.withLock { $0 }) }
}

extension EventLog {
  /// A log in memory on a clock the test sets.
  public static func inMemory(clock: TestClock, checkpointInterval: Int = 256) -> EventLog {
    inMemory(configuration: Configuration(clock: clock.now, checkpointInterval: checkpointInterval))
  }

  /// The store of a log made by `inMemory`, for tests that damage it.
  package var memoryStore: MemoryStore {
    guard let store = store as? MemoryStore else { preconditionFailure("\(location) is not in memory") }
    return store
  }

  /// Every event as the JSON line `export` prints.
  public func exportLines() throws -> [String] {
    var lines: [String] = []
    try export { lines.append($0.jsonLine) }
    return lines
  }
}

/// A deterministic mixed workload over two streams (fixed ids, so two logs
/// get identical events).
public func workload(count: Int) -> [WriteRequest] {
  var sizes: [StreamName: Int] = ["a": 0, "b": 0]
  var requests: [WriteRequest] = []
  var ids: [StreamName: [ItemID]] = ["a": [], "b": []]
  for i in 0..<count {
    let stream: StreamName = i % 3 == 0 ? "b" : "a"
    let n = sizes[stream]!
    let id = ItemID(canonical: String(format: "00000000-0000-4000-8000-%012x", i))!
    switch i % 5 {
    case 3 where n > 1:
      requests.append(
        WriteRequest(stream: stream, command: .move(from: i % n, to: (i * 7) % n, id: nil)))
      if i % n != (i * 7) % n { let x = ids[stream]!.remove(at: i % n); ids[stream]!.insert(x, at: (i * 7) % n) }
    case 4 where n > 2:
      requests.append(WriteRequest(stream: stream, command: .remove(.id(ids[stream]![n / 2]))))
      ids[stream]!.remove(at: n / 2)
      sizes[stream] = n - 1
    default:
      let index = i % (n + 1)
      requests.append(
        WriteRequest(
          stream: stream,
          command: .insert(InsertRequest(index: index, text: "m\(i) ✓", sender: i % 2 == 0 ? "ann" : nil, id: id))))
      ids[stream]!.insert(id, at: Int(index))
      sizes[stream] = n + 1
    }
  }
  return requests
}
