#if canImport(Glibc)
  import Glibc
#endif

/// The writes, declared once: the members each operation reads, the JSON
/// type and rule of each, which it needs (`declaration`), and whether it
/// takes `rebase` (`rebases`) and `undoes` (`undoes`).
///
/// Every door takes its writes from here. The JSON doors — an HTTP route's
/// body, an import line and, next, a replica's pushed change — go through
/// one decoder (`Write(decoding:operation:door:defaultStream:)`), and the
/// command line maps its arguments onto the same members and the same
/// decoder; which operations the command line lets `--rebase` go with,
/// and the bodies the route list documents, are read from here too. The
/// values' limits (text, sender) are checked once, by the ledger
/// (`Limits.check`).
///
/// Adding an operation is: its case and its declaration here (with the
/// command it makes), its `WriteRequest.Command` and ledger case, its docs.
package enum WriteOperation: Int, CaseIterable, Sendable {
  case append, insert, remove, move, edit, restore, undo, erase, unsign

  /// What a member's value is: its JSON type and the rule it keeps.
  package enum Value: Sendable {
    /// A string of message text (1 byte to 1 MiB of UTF-8, `Limits`).
    case text
    /// A string naming who wrote or edited it (1 byte to 1 KiB, `Limits`).
    case sender
    /// A string holding a UUID, in any case (`ItemID(canonical:)`).
    case uuid
    /// A string naming an item of the stream: its UUID, or 8 or more
    /// leading characters of it (`ItemSelector`).
    case selector
    /// A whole number from 0 to 2^63-1: an index, a seq.
    case number

    /// The JSON type, as the documentation and the messages name it.
    package var jsonType: String { self == .number ? "a whole number" : "a string" }
  }

  /// One member an operation reads.
  package struct Field: Sendable {
    package var member: WriteMember
    package var value: Value
    package var required: Bool
  }

  /// Whether a write made on the list at an older version may ask to be
  /// applied as meant there (`rebase`): an insert or a move by the
  /// predecessor rule, a remove or an edit by its item's id.
  package var rebases: Bool {
    switch self {
    case .insert, .move, .remove, .edit: true
    case .append, .restore, .undo, .erase, .unsign: false
    }
  }

  /// Whether an exported event of it may name the event it undoes
  /// (`undoes`): what undoing an insert, a remove, an edit, a move or a
  /// restore appends is a remove, a restore, an edit or a move.
  package var undoes: Bool {
    switch self {
    case .remove, .move, .edit, .restore: true
    case .append, .insert, .undo, .erase, .unsign: false
    }
  }

  /// Whether its event holds a text (and a sender) an erase may blank.
  package var holdsText: Bool {
    switch self {
    case .append, .insert, .edit: true
    case .remove, .move, .restore, .undo, .erase, .unsign: false
    }
  }

  /// An operation's own members. (Plain values only, so that reading one
  /// costs no reference counting: the decoder reads one per import line.)
  package struct Declaration: Sendable {
    private let storage: InlineArray<4, Field>
    private let count: Int
    /// The members it needs, and all it reads of its own.
    package let required: WriteMemberSet
    package let reads: WriteMemberSet

    init(_ fields: [Field]) {
      precondition((1...4).contains(fields.count), "an operation reads 1 to 4 members of its own")
      // Made once per process (every command line builds its option table
      // from these): plain loops, no key paths or closures to instantiate.
      var storage = InlineArray<4, Field>(repeating: fields[0])
      var required = WriteMemberSet()
      var reads = WriteMemberSet()
      for (i, field) in fields.enumerated() {
        storage[i] = field
        reads.insert(field.member)
        if field.required { required.insert(field.member) }
      }
      self.storage = storage
      count = fields.count
      self.required = required
      self.reads = reads
    }

    /// The members it reads, in the order it reads them.
    package var fields: [Field] { (0..<count).map { storage[$0] } }

    /// Calls `body` with each member it reads, in order.
    @inline(__always)
    func forEachField(_ body: (Field) throws(MsglogError) -> Void) throws(MsglogError) {
      for i in 0..<count { try body(storage[i]) }
    }
  }

  /// The declarations, by operation.
  private static let declarations: [Declaration] = allCases.map { operation in
    func field(_ member: WriteMember, _ value: Value, required: Bool = false) -> Field {
      Field(member: member, value: value, required: required)
    }
    let text = field(.text, .text, required: true)
    let sender = field(.sender, .sender)
    let item = field(.id, .selector, required: true)
    switch operation {
    case .append: return Declaration([text, sender, field(.id, .uuid)])
    case .insert:
      return Declaration([field(.index, .number, required: true), text, sender, field(.id, .uuid)])
    case .move:
      // `id`, when given, must be the item at `from` (what an exported move says).
      return Declaration(
        [field(.from, .number, required: true), field(.to, .number, required: true), field(.id, .uuid)])
    case .remove, .erase: return Declaration([item])
    case .edit: return Declaration([item, text, sender])
    case .restore:
      // Without `index`: right after its predecessor.
      return Declaration([item, field(.index, .number)])
    case .undo:
      // Without `seq`: the stream's latest event whose undoing changes
      // something. `sender`: who undid, named on an undo's edit.
      return Declaration([field(.seq, .number), sender])
    case .unsign:
      // Only an exported event makes one (`erase --sender` appends it).
      return Declaration([item, field(.edit, .number, required: true)])
    }
  }

  package var declaration: Declaration { Self.declarations[rawValue] }

  /// The command the decoded values stand for (every required one present).
  @inline(__always)
  func command(_ values: inout WriteValues) -> WriteRequest.Command {
    switch self {
    case .append: .insert(InsertRequest(text: values.text.take()!, sender: values.sender.take(), id: values.id))
    // Numbers are at most 2^63-1 (`WriteMembers.number`): every one is an Int.
    case .insert:
      .insert(
        InsertRequest(
          index: Int(values.index!), text: values.text.take()!, sender: values.sender.take(), id: values.id))
    case .move: .move(from: Int(values.from!), to: Int(values.to!), id: values.id)
    case .remove: .remove(values.selector.take()!)
    case .edit: .edit(values.selector.take()!, text: values.text.take()!, sender: values.sender.take())
    case .restore: .restore(values.selector.take()!, index: values.index.map { Int($0) })
    case .undo: .undo(seq: values.seq, sender: values.sender.take())
    case .erase: .erase(values.selector.take()!)
    case .unsign: .unsign(values.selector.take()!, edit: values.edit!)
    }
  }

  /// Its name: the `op` of a line, the command, the route's last part.
  package var name: String {
    switch self {
    case .append: "append"
    case .insert: "insert"
    case .move: "move"
    case .remove: "remove"
    case .edit: "edit"
    case .restore: "restore"
    case .undo: "undo"
    case .erase: "erase"
    case .unsign: "unsign"
    }
  }

  /// The operation named `name` (by its bytes: the decoder asks once per import line).
  package init?(name: String) {
    var name = name
    let found: WriteOperation? = name.withUTF8 { utf8 in
      func equals(_ text: StaticString) -> Bool {
        utf8.count == text.utf8CodeUnitCount && memcmp(utf8.baseAddress!, text.utf8Start, utf8.count) == 0
      }
      switch utf8.count {
      case 4: return equals("move") ? .move : equals("edit") ? .edit : equals("undo") ? .undo : nil
      case 5: return equals("erase") ? .erase : nil
      case 6:
        return equals("insert")
          ? .insert : equals("remove") ? .remove : equals("append") ? .append : equals("unsign") ? .unsign : nil
      case 7: return equals("restore") ? .restore : nil
      default: return nil
      }
    }
    guard let found else { return nil }
    self = found
  }

  /// "an insert", "a move": an event's op (`opName`) as messages name it.
  package static func withArticle(_ op: String) -> String { WriteOperation(name: op)?.withArticle ?? op }

  /// "an append", "a move": as messages name a write of it.
  package var withArticle: String {
    switch self {
    case .append, .insert, .edit, .undo, .erase, .unsign: "an \(name)"
    case .move, .remove, .restore: "a \(name)"
    }
  }
}

/// The values of a write's members, decoded by their declaration: what an
/// operation makes its command of.
struct WriteValues {
  var text: String?
  var sender: String?
  var id: ItemID?
  var selector: ItemSelector?
  var index: UInt64?
  var from: UInt64?
  var to: UInt64?
  var seq: UInt64?
  var edit: UInt64?
}

extension WriteRequest.Command {
  /// The declared operation this command is (an insert without an index is an append).
  package var operation: WriteOperation {
    switch self {
    case .insert(let insert): insert.index == nil ? .append : .insert
    case .remove: .remove
    case .move: .move
    case .edit: .edit
    case .restore: .restore
    case .undo: .undo
    case .erase: .erase
    case .unsign: .unsign
    }
  }
}
