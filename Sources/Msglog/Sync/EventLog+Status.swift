import MsglogPostgres

extension EventLog {
  /// What `msglog status` shows of a replica.
  public struct ReplicaStatus: Equatable, Sendable {
    /// The remote, as messages show it (credentials redacted).
    public var remote: String
    /// The replica's id, which its changes carry as their origin.
    public var replica: ItemID
    /// The replica's last event.
    public var seq: UInt64
    /// The remote's head when last heard from.
    public var remoteSeq: UInt64
    /// The pending changes, in order.
    public var pending: [PendingChange]
    /// The refusals learned by any sync, until `clearRefused()`.
    public var refused: [RefusedChange]
  }

  /// A change made on the replica and not yet done by its remote.
  public struct PendingChange: Equatable, Sendable {
    public var change: UInt64
    public var op: String
    public var stream: StreamName
    /// When it was made.
    public var made: Timestamp
    /// Why it does not apply to the local view now (an event pulled since
    /// took its item away, say); nil when it does. The remote will most
    /// likely refuse it too.
    public var conflict: String?
  }

  /// The replica's remote, seq, pending changes and refusals.
  public func replicaStatus() throws -> ReplicaStatus {
    try reading { snapshot in
      guard let view = snapshot.localView else { throw MsglogError.notAReplica(location: location) }
      guard let replicas = snapshot.storeReader as? any ReplicaStateReader else {
        throw MsglogError.notAReplica(location: location)
      }
      var refused: [RefusedChange] = []
      try replicas.forEachRefused { entry, json in
        refused.append(try Self.refusal(entry, json))
        return true
      }
      return ReplicaStatus(
        remote: Self.shown(remote: view.state.remote), replica: view.state.replica, seq: view.baseHead,
        remoteSeq: view.state.remoteHead,
        pending: try view.changes.map { change in
          PendingChange(
            change: change.number, op: change.opName, stream: change.stream, made: change.made,
            conflict: view.notApplying[change.number]?.description)
        }, refused: refused)
    }
  }

  /// Forgets the refusals listed so far.
  public func clearRefused() throws {
    try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, try replicas.replicaState() != nil else {
        throw MsglogError.notAReplica(location: location)
      }
      try replicas.clearRefused()
    }
  }

  /// A refusal as the replica keeps it (`json(of:)`), the `entry`th
  /// learned.
  static func refusal(_ entry: UInt64, _ json: [UInt8]) throws -> RefusedChange {
    func damaged(_ why: String) -> MsglogError {
      .derivedDamage(DerivedDamage(table: "refused", "refusal \(entry) \(why)"))
    }
    guard case .object(let members)? = try? JSONParser.parse(json) else { throw damaged("is not a JSON object") }
    guard case .number(let digits)? = members.first(where: { $0.0 == "pending" })?.1, let number = UInt64(digits)
    else { throw damaged("does not name its change") }
    var fields: [String: String] = [:]
    for (key, value) in members { if case .string(let text) = value { fields[key] = text } }
    let reason = members.first(where: { $0.0 == "reason" })?.1
    guard let op = fields["op"], let stream = fields["stream"], reason != nil || fields["error"] != nil else {
      throw damaged("lacks its op, stream or reason")
    }
    // Kept before reasons had codes: its words alone.
    let words = fields["error"] ?? "refused"
    return RefusedChange(
      change: number, op: op, stream: StreamName(stream),
      reason: reason.map { ChangeRefusal(json: $0, words: words) } ?? .unknown(code: nil, words: words))
  }

  /// A remote's location without its credentials.
  package static func shown(remote location: String) -> String {
    if PostgresStore.handles(location) {
      return (try? PostgresStore(location: location).shown) ?? "(a postgres:// location)"
    }
    // http(s)://user:password@host/… → http(s)://host/…
    let text = Array(location.utf8)
    guard let colon = text.firstIndex(of: UInt8(ascii: ":")), text[colon...].starts(with: Array("://".utf8)) else {
      return location
    }
    let start = colon + 3
    let ends: Set<UInt8> = [UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#")]
    let end = text[start...].firstIndex(where: { ends.contains($0) }) ?? text.endIndex
    guard let at = text[start..<end].lastIndex(of: UInt8(ascii: "@")) else { return location }
    return String(decoding: text[..<start] + text[(at + 1)...], as: UTF8.self)
  }
}
