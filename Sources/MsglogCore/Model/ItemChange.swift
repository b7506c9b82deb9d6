/// What one event does to a stream's list, in the terms an app's live list
/// uses: `Int` positions, and the whole item wherever one appears or
/// changes — the text of a restore (which its event names only by the seq
/// of the record that holds it) and the author and time of an edited item.
///
///     var items = try board.items().items
///     for try await change in board.changes() { change.apply(to: &items) }
///
/// `Event.op` is the log's record (its positions `UInt64`, as stored); a
/// change is that record read for a list, one read more for a restore or an
/// edit. Applying each change of a stream's events, in seq order, to the
/// list as it was before the first gives the list as it is after the last.
public struct ItemChange: Equatable, Sendable {
  /// The event the change comes from.
  public var event: Event
  public var kind: Kind

  /// How the list changes.
  public enum Kind: Equatable, Sendable {
    /// `item` is inserted so that it ends at `at` (0…count).
    case insert(Item, at: Int)
    /// The item `id`, at `at`, is removed.
    case remove(id: ItemID, at: Int)
    /// The item `id` is moved from `from` so that it ends at `to`.
    case move(id: ItemID, from: Int, to: Int)
    /// The item at `at` is now `item`: its new text and `edited` time, its
    /// author, time and seq as before.
    case edit(Item, at: Int)
    /// The removed `item` comes back at `at` (0…count), with the text it had
    /// when it was removed.
    case restore(Item, at: Int)
    /// The item `id` is erased: it leaves the list from `at` when it was
    /// live (as by a remove); nil when it was removed already (the list
    /// does not change).
    case erase(id: ItemID, at: Int?)
    /// An edit of the item `id` names its sender no more; the list does
    /// not change.
    case unsign(id: ItemID)
  }

  public init(event: Event, kind: Kind) {
    self.event = event
    self.kind = kind
  }

  /// The item the change is about.
  public var id: ItemID { event.id }

  /// Applies the change to `items`, the stream's list just before the
  /// event (what `items()` gave, with the earlier changes applied).
  public func apply(to items: inout [Item]) {
    switch kind {
    case .insert(let item, let at), .restore(let item, let at): items.insert(item, at: at)
    case .remove(_, let at): items.remove(at: at)
    case .move(_, let from, let to): items.insert(items.remove(at: from), at: to)
    case .edit(let item, let at): items[at] = item
    case .erase(_, let at): if let at { items.remove(at: at) }
    case .unsign: break
    }
  }
}
