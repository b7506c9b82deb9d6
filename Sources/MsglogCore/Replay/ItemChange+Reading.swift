extension ItemChange {
  /// The change `event` makes, with the items it names read from `reader`
  /// (any snapshot at or after the event: the records it reads never
  /// change): none for an insert, a move or a remove, the restored item's
  /// text (and, for an edited one, its insert) for a restore, the insert
  /// for an edit.
  package init(_ event: Event, in reader: any LogReader) throws {
    if let change = Self.withoutReading(event) {
      self = change
      return
    }
    self.event = event
    switch event.op {
    case .insert, .remove, .move, .erase, .unsign:
      preconditionFailure("made without reading")
    case .edit(let id, _, _, let index, _, _):
      kind = .edit(try Self.item(id, textSeq: event.seq, in: reader), at: Int(index))
    case .restore(let id, let index, let textSeq):
      kind = .restore(try Self.item(id, textSeq: textSeq, in: reader), at: Int(index))
    }
  }

  /// The change of an insert, a remove or a move, which the event holds
  /// whole; nil for an edit or a restore (their items must be read).
  package static func withoutReading(_ event: Event) -> ItemChange? {
    switch event.op {
    case .insert(let id, let index, let text, let sender):
      var item = Item(id: id, text: text, sender: sender, time: event.time, seq: event.seq)
      // Erased since: its text is gone, and the item says so, as a past list's does.
      item.erased = event.erased
      return ItemChange(event: event, kind: .insert(item, at: Int(index)))
    case .remove(let id, let index):
      return ItemChange(event: event, kind: .remove(id: id, at: Int(index)))
    case .move(let id, let from, let to):
      return ItemChange(event: event, kind: .move(id: id, from: Int(from), to: Int(to)))
    case .erase(let id, let index):
      return ItemChange(event: event, kind: .erase(id: id, at: index.map { Int($0) }))
    case .unsign(let id, _):
      return ItemChange(event: event, kind: .unsign(id: id))
    case .edit, .restore:
      return nil
    }
  }

  /// The item `id` with the text of the record at `textSeq`, as a list shows it.
  private static func item(_ id: ItemID, textSeq: UInt64, in reader: any LogReader) throws -> Item {
    try Replay.items([Slot(id: id, seq: textSeq)], in: reader)[0]
  }
}
