import Msglog
import Testing

/// The list an app shows, kept as docs/SYNC.md says — `items()` once, then
/// each update of `updates(from:)` applied — by a task of its own, as an
/// app's screen keeps it while the test writes, syncs and waits.
///
/// Every state the list passes through is checked as it comes: no id
/// twice, and no item the list held removed and inserted again in one
/// update (a confirmed message is an update of it).
final class ShownList {
  enum Seen: Sendable {
    case update(ListUpdate, list: StreamContents)
    case failed(String)
  }

  private let consumer: Task<Void, Never>
  private var iterator: AsyncStream<Seen>.Iterator
  /// The list as the updates so far made it.
  private(set) var list: StreamContents
  /// Every update applied so far.
  private(set) var updates: [ListUpdate] = []
  private var ended = false

  init(_ stream: LogStream, from shown: StreamContents) {
    let (seen, continuation) = AsyncStream.makeStream(of: Seen.self)
    consumer = Task.detached {
      var list = shown
      do {
        for try await update in stream.updates(from: shown) {
          update.apply(to: &list)
          continuation.yield(.update(update, list: list))
        }
      } catch {
        continuation.yield(.failed("\(error)"))
      }
      continuation.finish()
    }
    iterator = seen.makeAsyncIterator()
    list = shown
  }

  deinit { consumer.cancel() }

  /// Takes the list's states as they come until it is `expected` (its
  /// items, each field, and its version); records an issue when the
  /// consumer ends first. The watchdog only keeps a broken run from
  /// hanging the suite.
  func reach(_ expected: StreamContents, sourceLocation: SourceLocation = #_sourceLocation) async {
    guard !ended else {
      Issue.record("the list ended earlier", sourceLocation: sourceLocation)
      return
    }
    let consumer = consumer
    let watchdog = Task {
      try? await Task.sleep(for: .seconds(120))
      if !Task.isCancelled { consumer.cancel() }
    }
    defer { watchdog.cancel() }
    while list.items != expected.items || list.version != expected.version {
      switch await iterator.next() {
      case .update(let update, let after)?:
        Self.check(update, from: list, to: after, sourceLocation: sourceLocation)
        updates.append(update)
        list = after
      case .failed(let error)?:
        ended = true
        Issue.record("the updates failed: \(error)", sourceLocation: sourceLocation)
        return
      case nil:
        ended = true
        let became = "\(Self.texts(expected.items)) v\(expected.version)"
        let isNow = "\(Self.texts(list.items)) v\(list.version)"
        Issue.record("the list never became \(became); it is \(isNow)", sourceLocation: sourceLocation)
        return
      }
    }
  }

  private static func check(
    _ update: ListUpdate, from before: StreamContents, to after: StreamContents, sourceLocation: SourceLocation
  ) {
    let ids = after.items.map(\.id)
    #expect(Set(ids).count == ids.count, "an id twice: \(texts(after.items))", sourceLocation: sourceLocation)
    let held = Set(before.items.map(\.id))
    var removed: Set<ItemID> = []
    for change in update.changes {
      switch change {
      case .remove(let id, _) where held.contains(id): removed.insert(id)
      case .insert(let item, _):
        #expect(
          !held.contains(item.id) || !removed.contains(item.id),
          "\(item.text) removed and inserted again in one update", sourceLocation: sourceLocation)
      default: break
      }
    }
  }

  static func texts(_ items: [Item]) -> String {
    "[" + items.map { $0.text + ($0.pending ? "*" : "") }.joined(separator: ", ") + "]"
  }
}
