/// A stream's ordered array, built by folding its events in seq order.
///
/// Each position holds a `Slot`: the item's id and the seq of its text
/// record (its insert, or its latest edit), where its text is. `apply`
/// implements docs/REFERENCE.md's event table in O(log n) and checks every
/// event against the state — the recorded index of a remove or an edit and
/// the recorded id of a move must match, and an edit must replace the text
/// record the item has — so a log written by anything but a correct msglog
/// is caught at the first event that does not fit.
///
/// The order is a `PositionTree` of handles, each naming a slot kept in
/// arrays beside it (a handle per insert or restore, never reused), so the
/// tree moves 4 bytes where a slot is 24; a replay keeps what it needs of
/// each handle's record beside it too (`lastHandle`).
package struct Projection {
  /// Owns the order and the slots, for their lifetime and copy on write;
  /// the fold itself goes through the pointers below, which cost no
  /// reference counting and no exclusivity checks per event.
  private var storage: Storage
  private var order: PositionTree
  private var table: UnsafeMutablePointer<Storage.Table>
  /// The stream's version: how many of its events have been folded in.
  package private(set) var version: UInt64 = 0
  /// The handle the last insert or restore gave its slot.
  package private(set) var lastHandle: UInt32 = 0

  final class Storage {
    let order: PositionTree
    let table: UnsafeMutablePointer<Table>

    struct Table {
      var ids: UnsafeMutablePointer<ItemID>
      var seqs: UnsafeMutablePointer<UInt64>
      var count = 0
      var capacity: Int

      @inline(__always) func id(_ handle: UInt32) -> ItemID { ids[Int(handle)] }
      @inline(__always) func seq(_ handle: UInt32) -> UInt64 { seqs[Int(handle)] }

      /// A new handle for `slot`.
      @inline(__always)
      mutating func add(_ slot: Slot) -> UInt32 {
        if count == capacity {
          let grown = capacity * 2
          let newIDs = UnsafeMutablePointer<ItemID>.allocate(capacity: grown)
          newIDs.moveInitialize(from: ids, count: count)
          ids.deallocate()
          let newSeqs = UnsafeMutablePointer<UInt64>.allocate(capacity: grown)
          newSeqs.moveInitialize(from: seqs, count: count)
          seqs.deallocate()
          (ids, seqs, capacity) = (newIDs, newSeqs, grown)
        }
        (ids + count).initialize(to: slot.id)
        (seqs + count).initialize(to: slot.seq)
        count += 1
        return UInt32(count - 1)
      }
    }

    init(order: PositionTree = PositionTree(), capacity: Int = 64) {
      self.order = order
      table = .allocate(capacity: 1)
      table.initialize(
        to: Table(ids: .allocate(capacity: capacity), seqs: .allocate(capacity: capacity), capacity: capacity))
    }

    deinit {
      order.deallocate()
      table.pointee.ids.deallocate()
      table.pointee.seqs.deallocate()
      table.deallocate()
    }

    func copy() -> Storage {
      let copy = Storage(order: order.copy(), capacity: max(table.pointee.count, 64))
      copy.table.pointee.ids.initialize(from: table.pointee.ids, count: table.pointee.count)
      copy.table.pointee.seqs.initialize(from: table.pointee.seqs, count: table.pointee.count)
      copy.table.pointee.count = table.pointee.count
      return copy
    }
  }

  private init(storage: Storage, version: UInt64 = 0) {
    self.storage = storage
    self.order = storage.order
    self.table = storage.table
    self.version = version
  }

  package init() { self.init(storage: Storage()) }

  /// An empty projection with room for `handles` without growing (a
  /// hint: it grows past it as needed).
  package init(reservingHandles handles: Int) {
    self.init(storage: Storage(capacity: max(handles, 64)))
  }

  /// Starts from a checkpoint: the slots and version at some seq.
  package init(slots: [Slot], version: UInt64) {
    self.init(storage: Storage(capacity: max(slots.count, 64)))
    for slot in slots { order.insert(table.pointee.add(slot), at: order.count) }
    self.version = version
  }

  package var count: Int { order.count }

  /// The slot at `index` (0..<count).
  package func slot(at index: Int) -> Slot {
    let handle = order.element(at: index)
    return Slot(id: table.pointee.id(handle), seq: table.pointee.seq(handle))
  }

  /// The slots in order.
  package var slots: [Slot] {
    var slots: [Slot] = []
    slots.reserveCapacity(count)
    forEachSlot { slots.append($0) }
    return slots
  }

  /// The item ids in order.
  package var ids: [ItemID] { slots.map(\.id) }

  /// Calls `body` with each slot in order.
  package func forEachSlot(_ body: (Slot) throws -> Void) rethrows {
    let table = table
    try order.forEach { handle in try body(Slot(id: table.pointee.id(handle), seq: table.pointee.seq(handle))) }
  }

  /// Calls `body` with each handle and its slot, in order.
  package func forEachHandle(_ body: (UInt32, Slot) throws -> Void) rethrows {
    let table = table
    try order.forEach { handle in try body(handle, Slot(id: table.pointee.id(handle), seq: table.pointee.seq(handle))) }
  }

  package mutating func apply(_ event: Event) throws(ReplayError) {
    try apply(event.positional)
  }

  /// Folds one event of this stream into the array.
  package mutating func apply(_ event: PositionalEvent) throws(ReplayError) {
    guard event.version == version + 1 else {
      throw ReplayError(seq: event.seq, reason: "stream version \(event.version) follows \(version)")
    }
    if !isKnownUniquelyReferenced(&storage) { self = Projection(storage: storage.copy(), version: version) }
    let order = order
    let table = table
    let count = UInt64(order.count)
    switch event.change {
    case .insert(let index):
      guard index <= count else {
        throw ReplayError(seq: event.seq, reason: "insert at index \(index) of a stream with \(count) items")
      }
      lastHandle = table.pointee.add(Slot(id: event.id, seq: event.seq))
      order.insert(lastHandle, at: Int(index))
    case .erase(nil), .unsign:
      // A removed item erased, an edit unsigned: the list stays as it is.
      break
    case .remove(let index), .erase(let index?):
      guard index < count else {
        throw ReplayError(
          seq: event.seq, reason: "remove records \(event.id.text) at index \(index), but nothing is there")
      }
      let removed = order.element(at: Int(index))
      guard table.pointee.id(removed) == event.id else {
        throw ReplayError(
          seq: event.seq,
          reason: "remove records \(event.id.text) at index \(index), but \(table.pointee.id(removed).text) is there")
      }
      order.remove(at: Int(index))
    case .move(let from, let to):
      guard from < count, to < count else {
        throw ReplayError(seq: event.seq, reason: "move \(from) -> \(to) in a stream with \(count) items")
      }
      let moved = order.element(at: Int(from))
      guard table.pointee.id(moved) == event.id else {
        throw ReplayError(
          seq: event.seq,
          reason: "move records \(event.id.text) at index \(from), but \(table.pointee.id(moved).text) is there")
      }
      if from != to {
        order.remove(at: Int(from))
        order.insert(moved, at: Int(to))
      }
    case .edit(let index, let replaces):
      guard index < count else {
        throw ReplayError(
          seq: event.seq, reason: "edit records \(event.id.text) at index \(index), but nothing is there")
      }
      let handle = order.element(at: Int(index))
      guard table.pointee.id(handle) == event.id else {
        throw ReplayError(
          seq: event.seq,
          reason: "edit records \(event.id.text) at index \(index), but \(table.pointee.id(handle).text) is there")
      }
      guard table.pointee.seq(handle) == replaces else {
        throw ReplayError(
          seq: event.seq,
          reason:
            "edit of \(event.id.text) replaces the text of seq \(replaces), but its text is that of seq \(table.pointee.seq(handle))"
        )
      }
      table.pointee.seqs[Int(handle)] = event.seq
    case .restore(let index, let textSeq):
      guard index <= count else {
        throw ReplayError(seq: event.seq, reason: "restore at index \(index) of a stream with \(count) items")
      }
      lastHandle = table.pointee.add(Slot(id: event.id, seq: textSeq))
      order.insert(lastHandle, at: Int(index))
    }
    version = event.version
  }
}
