/// One change of a stream's list as an app shows it — in a replica, its
/// local view, pending writes included — with `Int` positions in that list
/// as the changes before it in the same `ListUpdate` left it.
///
/// Unlike an `ItemChange`, a list change need not come from one event: a
/// pending message confirmed by a sync is an `update` (its seq and time
/// now the remote's, `pending` false) rather than an insert of an item
/// the list already shows, and a pending change the remote refused is its
/// undoing (a `remove` of a refused message, a `move` back).
public enum ListChange: Equatable, Sendable {
  /// `item` is inserted so that it ends at `at` (0…count): an insert, a
  /// restore, or another writer's message arriving.
  case insert(Item, at: Int)
  /// The item `id`, at `at`, leaves the list.
  case remove(id: ItemID, at: Int)
  /// The item `id` is moved from `from` so that it ends at `to`.
  case move(id: ItemID, from: Int, to: Int)
  /// The item at `at` is now `item`: an edit, or its latest change done
  /// by the remote (`pending` false, a pending insert's seq and time now
  /// the log's).
  case update(Item, at: Int)

  /// The item the change is about.
  public var id: ItemID {
    switch self {
    case .insert(let item, _), .update(let item, _): return item.id
    case .remove(let id, _), .move(let id, _, _): return id
    }
  }

  /// Applies the change to `items`, the list as the changes before it
  /// left it.
  public func apply(to items: inout [Item]) {
    switch self {
    case .insert(let item, let at): items.insert(item, at: at)
    case .remove(_, let at): items.remove(at: at)
    case .move(_, let from, let to): items.insert(items.remove(at: from), at: to)
    case .update(let item, let at): items[at] = item
    }
  }

  /// The change `change` — one event's — makes to a list; nil for one
  /// that changes none (the erase of an item removed already, an unsign).
  public init?(changing change: ItemChange) {
    switch change.kind {
    case .erase(_, nil), .unsign: return nil
    default: break
    }
    self.init(change)
  }

  /// The change `change` — one event's — makes to a list (an erase of a
  /// removed item makes none: see `init(changing:)`).
  public init(_ change: ItemChange) {
    switch change.kind {
    case .insert(let item, let at), .restore(let item, let at): self = .insert(item, at: at)
    case .remove(let id, let at): self = .remove(id: id, at: at)
    case .move(let id, let from, let to): self = .move(id: id, from: from, to: to)
    case .edit(let item, let at): self = .update(item, at: at)
    case .erase(let id, let at):
      precondition(at != nil, "an erase of a removed item changes no list")
      self = .remove(id: id, at: at ?? 0)
    case .unsign(let id):
      preconditionFailure("taking an edit's sender off (\(id.text)) changes no list")
    }
  }
}
