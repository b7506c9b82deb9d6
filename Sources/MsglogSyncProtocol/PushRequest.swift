import MsglogCore

/// A replica's push (`POST /api/sync/push`): its changes, in order, for
/// the remote to do each at most once, proving with its secret that it is
/// the replica it says: `{"protocol","log","replica","secret","changes"}`,
/// each change as `ReplicaChange`'s JSON.
package struct PushRequest: Equatable, Sendable {
  /// The sender's sync protocol.
  package var protocolVersion: Int
  /// The log the replica is a copy of (a remote of another refuses the push).
  package var log: ItemID
  package var replica: ItemID
  /// What proves the replica is itself; nil from a msglog before replicas
  /// had secrets (whose push the remote refuses).
  package var secret: ReplicaSecret?
  package var changes: [ReplicaChange]

  package init(log: ItemID, replica: ItemID, secret: ReplicaSecret?, changes: [ReplicaChange]) {
    protocolVersion = SyncProtocol.version
    self.log = log
    self.replica = replica
    self.secret = secret
    self.changes = changes
  }

  /// What makes a body no push this remote can do, in the order it is
  /// checked (a newer protocol before anything it may shape otherwise).
  package enum Problem: Error, Equatable, Sendable {
    case notJSON(JSONParser.Error)
    case notAnObject
    /// The first member, by name, that a push does not have.
    case unknownMember(String)
    /// `protocol` is missing or no whole number.
    case noProtocol
    /// The sender speaks a protocol newer than this msglog's.
    case newerProtocol(UInt64)
    /// `log` or `replica` is missing or no UUID.
    case notAnID(member: String)
    /// `secret` is not 64 lowercase hex digits.
    case malformedSecret
    case changesNotAnArray
    /// More changes than a push may carry (`SyncProtocol.pushChanges`).
    case tooManyChanges(Int)
    /// The change at `position` (from 1) does not decode.
    case malformedChange(position: Int, MsglogError)
  }

  static let members: Set<String> = ["protocol", "log", "replica", "secret", "changes"]

  /// The push as the replica sends it.
  package var json: [UInt8] {
    var json = JSONWriter()
    json.object { json in
      json.member("protocol", protocolVersion)
      json.member("log", log)
      json.member("replica", replica)
      if let secret { json.member("secret", secret.hex) }
      json.key("changes")
      json.array { json in for change in changes { change.write(to: &json) } }
    }
    return json.take()
  }

  /// Reads a push strictly: a member missing, of the wrong type or unknown
  /// is refused, naming it (a typo must not be ignored).
  package init(json body: [UInt8]) throws(Problem) {
    let value: JSONValue
    do { value = try JSONParser.parse(body) } catch { throw .notJSON(error) }
    guard case .object(let pairs) = value else { throw .notAnObject }
    var members: [String: JSONValue] = [:]
    for (key, value) in pairs { members[key] = value }
    if let unknown = members.keys.sorted().first(where: { !Self.members.contains($0) }) {
      throw .unknownMember(unknown)
    }
    guard case .number(let text)? = members["protocol"], let version = Limits.parseNumber(text) else {
      throw .noProtocol
    }
    guard SyncProtocol.speaks(version) else { throw .newerProtocol(version) }
    func id(_ key: String) throws(Problem) -> ItemID {
      guard case .string(let text)? = members[key], let id = ItemID(canonical: text) else {
        throw .notAnID(member: key)
      }
      return id
    }
    protocolVersion = Int(version)
    log = try id("log")
    replica = try id("replica")
    secret = nil
    if let given = members["secret"] {
      guard case .string(let text) = given, let parsed = ReplicaSecret(hex: text) else { throw .malformedSecret }
      secret = parsed
    }
    guard case .array(let items)? = members["changes"] else { throw .changesNotAnArray }
    guard items.count <= SyncProtocol.pushChanges else { throw .tooManyChanges(items.count) }
    changes = []
    for (index, item) in items.enumerated() {
      do { changes.append(try ReplicaChange(json: item)) } catch {
        throw .malformedChange(position: index + 1, error)
      }
    }
  }
}
