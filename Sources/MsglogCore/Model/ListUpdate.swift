/// What happened to a stream's list as an app shows it — in a replica,
/// its local view, pending writes included — between two reads of it:
/// the changes that turn the list read first into the list read next.
///
///     var shown = try chat.items()
///     for try await update in chat.updates(from: shown) {
///       update.apply(to: &shown)  // now what chat.items() gave when the update was read
///     }
///
/// One update is one state the list was in, so an app shows it as one
/// animation: the list after it (`apply(to:)`) given to a diffable data
/// source or SwiftUI, or its changes one `performBatchUpdates` each
/// (UIKit reads a batch's removals and moves against the list before it
/// and its insertions against the list after; these are sequential).
public struct ListUpdate: Equatable, Sendable {
  /// The stream.
  public var stream: StreamName
  /// In order: each applies to the list as the ones before it left it.
  public var changes: [ListChange]
  /// The counters of the list after the changes, as `items()` gives them:
  /// the log's head seq (a replica's last event) when it was read, and the
  /// stream's version (in a replica, of its local view).
  public var seq: UInt64
  public var version: UInt64

  public init(stream: StreamName, changes: [ListChange], seq: UInt64, version: UInt64) {
    self.stream = stream
    self.changes = changes
    self.seq = seq
    self.version = version
  }

  /// Applies the changes to `items`, the list before them.
  public func apply(to items: inout [Item]) {
    for change in changes { change.apply(to: &items) }
  }

  /// Applies the changes to `contents`' items and takes the new counters.
  public func apply(to contents: inout StreamContents) {
    precondition(contents.stream == stream, "an update of stream \(stream) applied to stream \(contents.stream)")
    apply(to: &contents.items)
    contents.seq = seq
    contents.version = version
  }
}
