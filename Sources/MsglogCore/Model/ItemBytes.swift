/// An item as its records hold it, lent by a read: its text and sender are
/// the records' own bytes (checked, valid UTF-8), not strings made from
/// them, so that `list` and `replay` write a million items without making
/// a million `Item`s.
///
/// - Warning: the bytes are valid only during the call that lends them.
package struct ItemBytes {
  package var id: ItemID
  /// The UTF-8 text: the latest edit's, or the insert's.
  package var text: UnsafeRawBufferPointer
  /// The UTF-8 sender of the insert; nil when it has none.
  package var sender: UnsafeRawBufferPointer?
  /// The insert's time and seq.
  package var time: Timestamp
  package var seq: UInt64
  /// The latest edit's time; nil when never edited.
  package var edited: Timestamp?
  /// A replica's item whose latest change is pending (`Item.pending`).
  package var pending = false
  /// Erased since, by the erase at this seq (`Item.erased`).
  package var erased: UInt64?

  package init(
    id: ItemID, text: UnsafeRawBufferPointer, sender: UnsafeRawBufferPointer?, time: Timestamp, seq: UInt64,
    edited: Timestamp? = nil
  ) {
    self.id = id
    self.text = text
    self.sender = sender
    self.time = time
    self.seq = seq
    self.edited = edited
  }

  /// The item as a value that outlives the call.
  package var item: Item {
    var item = Item(
      id: id, text: String(decoding: text, as: UTF8.self), sender: sender.map { String(decoding: $0, as: UTF8.self) },
      time: time, seq: seq, edited: edited, pending: pending)
    item.erased = erased
    return item
  }

  /// Lends `item`'s strings as bytes (a store whose records do not stay
  /// mapped, a replica's local view: their items are values already).
  package static func lending<R>(_ item: Item, _ body: (ItemBytes) throws -> R) rethrows -> R {
    var text = item.text
    var sender = item.sender
    return try text.withUTF8 { text in
      func lend(_ sender: UnsafeRawBufferPointer?) throws -> R {
        var bytes = ItemBytes(
          id: item.id, text: UnsafeRawBufferPointer(text), sender: sender, time: item.time, seq: item.seq,
          edited: item.edited)
        bytes.pending = item.pending
        bytes.erased = item.erased
        return try body(bytes)
      }
      guard sender != nil else { return try lend(nil) }
      return try sender!.withUTF8 { try lend(UnsafeRawBufferPointer($0)) }
    }
  }
}
