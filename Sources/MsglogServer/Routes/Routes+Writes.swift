import Msglog
import MsglogWire

extension Routes {
  /// A write, from a JSON body of the members its operation's declaration
  /// reads (`WriteOperation`, `WriteDoor.command`), decoded and checked as
  /// an import line's and the command line's arguments are; answered when
  /// its batch commits, by the thread that commits it.
  func write(_ request: Request, _ operation: WriteOperation, _ deferral: Route.Deferral) throws {
    var members = try RequestBody.members(request.body)
    try Self.sendAs(request.caller, operation, &members)
    let write = try Write(decoding: &members, operation: operation, door: .command, defaultStream: .main)
    log.perform(try WriteBatch(write), buildingHere: deferral.buildsHere) { outcomes in
      deferral.answer(outcomes.map { outcomes in Self.answer(outcomes[0], operation) })
    }
  }

  /// A write's answer: its outcome, or what the command line says of a
  /// write that appended nothing.
  private static func answer(_ outcome: Outcome?, _ operation: WriteOperation) -> Response {
    guard let outcome else {
      switch operation {
      case .edit: return .json { $0.unchanged("edited") }
      case .undo: return .json { $0.unchanged("undone") }
      default: return .json { $0.unchanged("moved") }
      }
    }
    return .json { $0.outcome(outcome) }
  }

  /// The sender of a named token's write is its name (SPEC "The sender is
  /// the token's name"): a body without one gets it, a body naming another
  /// is refused (403) before anything is done. The operator's token and a
  /// server without tokens keep the body's sender.
  static func sendAs(_ caller: Caller, _ operation: WriteOperation, _ members: inout WriteMembers) throws(HTTPError) {
    guard let name = caller.name, operation.declaration.fields.contains(where: { $0.member == .sender }) else {
      return
    }
    switch members[.sender] {
    case nil: members.set(.sender, .string(name))
    case .string(let sent)? where sent.hasSameBytes(as: name): break
    case .string(let sent)?:
      throw TokenGate.forbidden("token \(name) writes as \(name), not as \(TerminalText.quoted(sent))")
    default: break  // not a string: the decoder's 400
    }
  }

  /// A write route's body as the route list documents it: the members its
  /// operation and the door read, in the order a body usually has them.
  static func body(_ operation: WriteOperation) -> String {
    var members = ["stream"] + operation.declaration.fields.map(\.member.name) + ["expectVersion"]
    if operation.rebases { members.append("rebase") }
    return "{" + members.map { "\"\($0)\"" }.joined(separator: ",") + "}"
  }
}
