import Msglog
import MsglogWire

extension Routes {
  /// A write, from a JSON body of the members its operation's declaration
  /// reads (`WriteOperation`, `WriteDoor.command`), decoded and checked as
  /// an import line's and the command line's arguments are.
  func write(_ request: Request, _ operation: WriteOperation) throws -> Response {
    var members = try RequestBody.members(request.body)
    let write = try Write(decoding: &members, operation: operation, door: .command, defaultStream: .main)
    guard let outcome = try log.perform(WriteBatch(write))[0] else {
      // Nothing appended, as the command line's no-ops.
      switch operation {
      case .edit: return .json { $0.unchanged("edited") }
      case .undo: return .json { $0.unchanged("undone") }
      default: return .json { $0.unchanged("moved") }
      }
    }
    return .json { $0.outcome(outcome) }
  }

  /// A write route's body as the route list documents it: the members its
  /// operation and the door read, in the order a body usually has them.
  static func body(_ operation: WriteOperation) -> String {
    var members = ["stream"] + operation.declaration.fields.map(\.member.name) + ["expectVersion"]
    if operation.rebases { members.append("rebase") }
    return "{" + members.map { "\"\($0)\"" }.joined(separator: ",") + "}"
  }
}
