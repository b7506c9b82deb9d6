/// A stream's events after some past version, oldest first: enough to tell
/// what became of any position of the list as it was at that version,
/// without rebuilding that list.
///
/// The predecessor rule (docs/REFERENCE.md, "Working together") asks which
/// item sat at a position of a past list and whether it is still live. Each
/// event records the id and the indices it touched, so a position is
/// followed forward arithmetically: an insert or a restore at or before it
/// shifts it up, a remove before it shifts it down, and an event at that
/// very position (a remove, a move of it, an edit of it) names the item,
/// which the id index then finds at the head. O(k) for k later events.
package struct LaterEvents {
  /// Oldest first; every one of the stream, each right after the one before.
  package var events: [PositionalEvent]

  package init(_ events: [PositionalEvent]) {
    self.events = events
  }

  /// What became of the item at a position of the past list.
  package enum Fate: Equatable, Sendable {
    /// It is at this index of the list at the head.
    case at(Int)
    /// A later event named it (removed, moved or edited it): where it is now,
    /// if anywhere, is the id index's to say.
    case named(ItemID)
  }

  /// Follows `position` of the past list through the later events.
  package func follow(_ position: Int) -> Fate {
    var p = position
    for event in events {
      switch event.change {
      case .insert(let index), .restore(let index, _):
        if Int(index) <= p { p += 1 }
      case .remove(let index), .erase(let index?):
        let i = Int(index)
        if i == p { return .named(event.id) }
        if i < p { p -= 1 }
      case .erase(nil), .unsign: break
      case .move(let from, let to):
        let f = Int(from)
        if f == p { return .named(event.id) }
        if f < p { p -= 1 }
        if Int(to) <= p { p += 1 }
      case .edit(let index, _):
        if Int(index) == p { return .named(event.id) }
      }
    }
    return .at(p)
  }

  /// How many items the list had at the past version, given how many it has now.
  package func pastCount(now: Int) -> Int {
    var count = now
    for event in events {
      switch event.change {
      case .insert, .restore: count -= 1
      case .remove, .erase(_?): count += 1
      case .move, .edit, .erase(nil), .unsign: break
      }
    }
    return count
  }
}
