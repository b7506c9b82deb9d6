/// One write as a door hands it over: the request, and the version of the
/// stream its user saw (`expectVersion`, and whether to `rebase` from it).
package struct Write: Equatable, Sendable {
  package var request: WriteRequest
  package var expectVersion: UInt64?
  package var rebase: Bool

  package init(_ request: WriteRequest, expectVersion: UInt64? = nil, rebase: Bool = false) {
    self.request = request
    self.expectVersion = expectVersion
    self.rebase = rebase
  }
}

extension Write {
  /// The write `members` stand for, read by `door` and the operation's
  /// declaration (`WriteOperation`): the one decoder of every door's writes.
  ///
  /// What it refuses, in this order, each with the words every door says:
  /// an operation the door does not take; a member of the wrong type (null
  /// is no value of any: leave the member out); a malformed stream name, id
  /// or time; a missing required member; a member no write of the door has,
  /// or one this operation does not take. Limits of the values (text,
  /// sender) are the ledger's; whether `rebase` has its `expectVersion` is
  /// `WriteBatch`'s.
  ///
  /// - Parameters:
  ///   - operation: the door's (an HTTP route's, a command's); nil when the
  ///     object names it (`op`, `WriteDoor.Envelope.op`).
  ///   - defaultStream: the stream of a write without `stream`.
  package init(
    decoding members: inout WriteMembers, operation: WriteOperation? = nil, door: WriteDoor,
    defaultStream: StreamName
  ) throws(MsglogError) {
    let op: WriteOperation
    if let operation {
      op = operation
    } else {
      guard let name = try members.string(.op) else { throw .invalidInput(.write("missing member \"op\"")) }
      guard let named = WriteOperation(name: name), door.takes(named) else {
        let names = WriteOperation.allCases.filter(door.takes).map(\.name)
        throw .invalidInput(
          .write(
            "unknown op \(TerminalText.quoted(name)): expected "
              + names.dropLast().joined(separator: ", ") + " or " + names.last!))
      }
      op = named
    }
    let envelope = door.envelope
    var exportedSeq: UInt64? = nil
    if envelope.contains(.exported) {
      exportedSeq = try members.number(.seq)
      _ = try members.number(.version)
    }
    let stream = try members.stream() ?? defaultStream
    let time = envelope.contains(.time) ? try members.time() : nil

    let declaration = op.declaration
    var values = WriteValues()
    try declaration.forEachField { field throws(MsglogError) in
      switch field.member {
      case .text: values.text = try members.string(.text)
      case .sender: values.sender = try members.string(.sender)
      case .id where field.value == .selector: values.selector = try members.selector(.id)
      case .id: values.id = try members.uuid(.id)
      case .index: values.index = try members.number(.index)
      case .from: values.from = try members.number(.from)
      case .to: values.to = try members.number(.to)
      case .seq: values.seq = try members.number(.seq)
      case .edit: values.edit = try members.number(.edit)
      case .erased, .expectVersion, .op, .rebase, .stream, .time, .undoes, .version:
        preconditionFailure("\(field.member.name) is a door's member, not an operation's")
      }
    }
    let missing = declaration.required.subtracting(members.present)
    if !missing.isEmpty {
      throw .invalidInput(
        .write("\(op.withArticle) needs " + missing.members.map(\.quoted).joined(separator: " and ")))
    }

    var expectVersion: UInt64? = nil
    var rebase = false
    if envelope.contains(.versions) {
      expectVersion = try members.number(.expectVersion)
      if op.rebases { rebase = try members.bool(.rebase) ?? false }
    }
    var undoes: UInt64? = nil
    if envelope.contains(.undoes), op.undoes {
      undoes = try members.number(.undoes)
      if undoes == 0 { throw .invalidInput(.write("\"undoes\" must name a seq, from 1")) }
    }
    var erased: UInt64? = nil
    if envelope.contains(.exported), op.holdsText {
      erased = try members.number(.erased)
      if erased == 0 { throw .invalidInput(.write("\"erased\" must name a seq, from 1")) }
    }
    // A typo (`"sendr"`) must not be lost: whatever is left unread is refused.
    if let unread = members.present.subtracting(members.read).first {
      guard door.vocabulary.contains(unread) else {
        throw .invalidInput(.write("unknown member \(unread.quoted)"))
      }
      throw .invalidInput(.write("\(op.withArticle) takes no \(unread.quoted)"))
    }
    var request = WriteRequest(stream: stream, command: op.command(&values), time: time, undoes: undoes, erased: erased)
    request.exportedSeq = exportedSeq
    self.init(request, expectVersion: expectVersion, rebase: rebase)
  }
}
