/// The bounds docs/REFERENCE.md puts on user input, for every door alike: a
/// request's text and sender are checked by the ledger (`check(_:)`), and
/// again on every event it appends (`check(_:time:origin:)`), whichever
/// way the write came — a command, a route, an import line, a replica's
/// pushed change, a record a replica pulls; a stream name by
/// `StreamName(validating:)` and where the ledger first meets a stream.
package enum Limits {
  /// Message text: 1 byte to 1 MiB of UTF-8.
  package static let maxTextBytes = 1 << 20
  /// Stream names: 1 to 200 bytes.
  package static let maxStreamNameBytes = 200
  /// Sender names: up to 1 KiB, which keeps a list line readable.
  package static let maxSenderBytes = 1024
  /// Indices, seqs and versions are decimal integers from 0 to 2^63-1.
  package static let maxNumber = UInt64(Int64.max)

  /// The limits of a request's own values, its text and sender: checked
  /// once, by the ledger and the bulk import before either does anything
  /// with it, whichever door it came through.
  @inline(__always)
  package static func check(_ request: WriteRequest) throws(MsglogError) {
    if request.erased != nil {
      // What an erase left: nothing to check but that it is nothing; an
      // edit unsigned (`erase --sender`) keeps its text and names nobody.
      switch request.command {
      case .insert(let insert) where insert.text.isEmpty && insert.sender == nil: return
      case .edit(_, let text, nil) where text.isEmpty: return
      case .edit(_, let text, nil):
        try checkText(text)
        return
      default: throw .invalidInput(.write("an erased insert or edit holds no text and no sender"))
      }
    }
    switch request.command {
    case .insert(let insert):
      try checkText(insert.text)
      if let sender = insert.sender { try checkSender(sender) }
    case .edit(_, let text, let sender):
      try checkText(text)
      if let sender { try checkSender(sender) }
    case .undo(_, let sender):
      if let sender { try checkSender(sender) }
    case .remove, .move, .restore, .erase, .unsign:
      break
    }
  }

  /// The limits of a replica's change's own values, its text and sender.
  package static func check(_ intent: ReplicaChange.Intent) throws(MsglogError) {
    switch intent {
    case .append(_, let text, let sender, _), .insert(_, let text, let sender, _, _), .edit(_, let text, let sender):
      try checkText(text)
      if let sender { try checkSender(sender) }
    case .undo(_, let sender):
      if let sender { try checkSender(sender) }
    case .move, .remove, .restore:
      break
    }
  }

  /// The limits of an event about to be appended (its text and sender,
  /// its origin): the one check no write gets past, whatever door it came
  /// through (`LedgerSession.append`). `verify` applies it to every record.
  @inline(__always)
  package static func check(_ op: Event.Op, time: Timestamp, origin: Origin?) throws(MsglogError) {
    switch op {
    case .insert(_, _, let text, let sender), .edit(_, let text, let sender, _, _, _):
      try checkText(text)
      if let sender { try checkSender(sender) }
    case .remove, .move, .restore, .erase, .unsign:
      break
    }
    if let origin { try check(origin, at: time) }
  }

  /// How far past the time a change is done at its `made` may be: a
  /// replica's clock a little fast is normal, one a day ahead is not.
  package static let madeLeeway: Int64 = 86_400_000

  /// An origin's limits at `time` (when it is done: the server's clock):
  /// a replica's id is never the nil UUID, and its change was made between
  /// 1970 and a day after `time`.
  package static func check(_ origin: Origin, at time: Timestamp) throws(MsglogError) {
    if origin.replica == ItemID.nil { throw .invalidInput(.nilReplica) }
    let made = origin.made.milliseconds
    if made < 0 || made > time.milliseconds &+ madeLeeway {
      throw .invalidInput(.madeOutOfRange(made: origin.made, time: time))
    }
  }

  package static func checkText(_ text: String) throws(MsglogError) {
    let n = text.utf8.count
    if n == 0 { throw .invalidInput(.emptyText) }
    if n > maxTextBytes { throw .invalidInput(.textTooLong(bytes: n)) }
  }

  package static func checkSender(_ sender: String) throws(MsglogError) {
    let n = sender.utf8.count
    if n == 0 { throw .invalidInput(.emptySender) }
    if n > maxSenderBytes { throw .invalidInput(.senderTooLong(bytes: n)) }
  }

  package static func checkStreamName(_ name: String) throws(MsglogError) {
    let n = name.utf8.count
    if n == 0 { throw .invalidInput(.emptyStreamName) }
    if n > maxStreamNameBytes { throw .invalidInput(.streamNameTooLong(bytes: n)) }
    if name.unicodeScalars.contains(where: { $0.isControl }) { throw .invalidInput(.streamNameHasControl(name)) }
  }

  /// Parses a decimal integer in 0…2^63-1, with any number of leading
  /// zeros; nil for a sign, a letter, an overflow.
  package static func parseNumber(_ text: String) -> UInt64? {
    let utf8 = text.utf8
    guard !utf8.isEmpty, utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    let digits = utf8.drop { $0 == 0x30 }
    guard digits.count <= 19 else { return nil }
    var value: UInt64 = 0
    for byte in digits { value = value * 10 + UInt64(byte - 0x30) }
    return value <= maxNumber ? value : nil
  }
}

extension Unicode.Scalar {
  /// C0, DEL and C1 controls.
  var isControl: Bool { value < 0x20 || (0x7F...0x9F).contains(value) }
}
