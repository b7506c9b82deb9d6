/// A way writes come in as JSON objects of members, and what it adds to
/// each: the operations it takes, whether the object names its operation,
/// and the members beyond the operation's own (`WriteOperation`). Every
/// door has `stream` (a stream name; the door's default when absent).
///
/// A door with members of its own (a replica's pushed change: its origin
/// and the seq it was made at) reads them from its object itself and
/// leaves them out of the members it decodes (`WriteMembers(object:skipping:)`).
/// Plain values only: the decoder reads one per import line.
package struct WriteDoor: Sendable {
  /// The members a door adds to every write.
  package struct Envelope: OptionSet, Sendable {
    package let rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    /// `op`: the object names its operation (an import line); without it
    /// the door does (an HTTP route, a command).
    package static let op = Envelope(rawValue: 1)
    /// `expectVersion` (a whole number): refuse unless the stream is at
    /// this version; with an operation that rebases, `rebase` (true or
    /// false), which needs it.
    package static let versions = Envelope(rawValue: 2)
    /// `time` (an RFC 3339 string): the event's time, kept.
    package static let time = Envelope(rawValue: 4)
    /// `undoes` (a seq from 1), with an operation that may undo: the event
    /// it undoes, checked against what undoing that event appends.
    package static let undoes = Envelope(rawValue: 8)
    /// `seq` and `version` of an exported event: whole numbers, checked
    /// for their form and otherwise ignored (the database assigns its own);
    /// with an insert or an edit, `erased` (a seq from 1): the event as an
    /// erase left it, its text empty.
    package static let exported = Envelope(rawValue: 16)
  }

  /// The operations it takes, one bit each.
  private let operations: UInt16
  package let envelope: Envelope
  /// Every member some write of this door may have: any other is unknown here.
  let vocabulary: WriteMemberSet

  package init(operations: [WriteOperation], envelope: Envelope) {
    var bits: UInt16 = 0
    var common = WriteMemberSet()
    common.insert(.stream)
    if envelope.contains(.op) { common.insert(.op) }
    if envelope.contains(.versions) { common.insert(.expectVersion) }
    if envelope.contains(.time) { common.insert(.time) }
    if envelope.contains(.exported) {
      common.insert(.seq)
      common.insert(.version)
    }
    // Every member a write of each operation may have through this door
    // (what the decoder reads; anything else is left unread, and refused).
    var vocabulary = common
    for operation in operations {
      bits |= 1 << operation.rawValue
      let declaration = operation.declaration
      precondition(
        declaration.reads.subtracting(common) == declaration.reads, "a door's own members are no operation's")
      vocabulary = vocabulary.union(declaration.reads)
      if operation.rebases, envelope.contains(.versions) { vocabulary.insert(.rebase) }
      if operation.undoes, envelope.contains(.undoes) { vocabulary.insert(.undoes) }
      if operation.holdsText, envelope.contains(.exported) { vocabulary.insert(.erased) }
    }
    self.operations = bits
    self.envelope = envelope
    self.vocabulary = vocabulary
  }

  /// Whether it takes writes of `operation`.
  package func takes(_ operation: WriteOperation) -> Bool { operations & 1 << operation.rawValue != 0 }

  /// A command a user made on a list they saw: an HTTP route's body, and
  /// the command line's arguments mapped onto the same members. The
  /// operation is the route's (the command's).
  /// (An unsign is `erase --sender`'s, never a command of its own.)
  package static let command = WriteDoor(
    operations: WriteOperation.allCases.filter { $0 != .unsign }, envelope: .versions)

  /// A line of `import`: an event as `export` writes it, or one made by hand.
  package static let importLine = WriteDoor(
    operations: [.append, .insert, .remove, .move, .edit, .restore, .erase, .unsign],
    envelope: [.op, .time, .undoes, .exported])
}
