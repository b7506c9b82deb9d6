import Msglog
import MsglogWire

/// `POST /api/erase` (docs/REFERENCE.md, "Forgetting on purpose"): items
/// forgotten for everyone, by ids or by sender, as `msglog erase` does.
extension Routes {
  static func eraseRoutes(_ api: Routes) -> [Route] {
    [
      Route(
        // The erase right on the body's stream (else main; SPEC: `--erase`
        // includes writing, writing does not include erasing): by sender
        // too, the route erases in that one stream only.
        .post, "/api/erase", needsToken: true, permission: .stream(.erase, .body),
        body: [
          .init("stream", .string, "the stream (default: main)"),
          .init("ids", .any, "the items: an array of UUIDs or prefixes of 8+ hex digits"),
          .init("sender", .text, "instead of `ids`: every item whose insert names this sender (and the sender taken off their edits of others' items)"),
        ],
        success: .init(#"`erase --json`: `{"erased":["…"],"events":M,"seq":S}`, or `{"erased":[],"events":0}`"#),
        refusals: [404, 409]
      ) { try api.erase($0) }
    ]
  }

  func erase(_ request: Request) throws -> Response {
    let value: JSONValue
    do { value = try JSONParser.parse(request.body) } catch {
      throw HTTPError.badRequest("the body is not JSON: \(error)")
    }
    guard case .object(let members) = value else { throw HTTPError.badRequest("the body must be a JSON object") }
    var stream: StreamName? = nil
    var ids: [String]? = nil
    var sender: String? = nil
    for (name, value) in members {
      switch (name, value) {
      case ("stream", .string(let name)): stream = try StreamName(validating: name)
      case ("sender", .string(let name)): sender = name
      case ("ids", .array(let values)):
        ids = try values.map { value in
          guard case .string(let id) = value else {
            throw HTTPError.badRequest("\"ids\" holds strings: the items' ids")
          }
          return id
        }
      case ("stream", _), ("sender", _), ("ids", _):
        throw HTTPError.badRequest("\"\(name)\" has the wrong type")
      default:
        throw HTTPError.badRequest("unknown member \"\(name)\": an erase takes \"stream\" and \"ids\" or \"sender\"")
      }
    }
    let erasure: EventLog.Erasure
    switch (ids, sender) {
    case (let ids?, nil):
      guard !ids.isEmpty else { throw HTTPError.badRequest("\"ids\" names no item") }
      // Each id read as a remove's is, by the decoder every door uses.
      let requests = try ids.map { id in
        var members = WriteMembers()
        members.set(.id, .string(id))
        return try Write(decoding: &members, operation: .erase, door: .command, defaultStream: stream ?? .main).request
      }
      erasure = try log.erasing(requests)
    case (nil, let sender?):
      erasure = try log.erase(sender: sender, in: stream ?? .main)
    default:
      throw HTTPError.badRequest("an erase takes \"ids\" or \"sender\", one of them")
    }
    return .json { $0.erasure(erasure) }
  }
}
