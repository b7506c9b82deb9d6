import MsglogCore

/// What a remote says first (`GET /api/sync?protocol=N`):
/// `{"protocol","format","log","head"}`, and `"horizon"` for a trimmed log.
public struct RemoteHello: Equatable, Sendable {
  /// Its sync protocol (`SyncProtocol.version`).
  public var protocolVersion: Int
  /// The newest record format its log may hold.
  public var recordFormat: Int
  /// Its log's id; nil for a log made before logs had one (not yet clonable).
  public var log: ItemID?
  public var head: UInt64
  /// Where its log's history begins (`msglog trim`): 1 for a log never
  /// trimmed. A replica behind it starts again from the remote's bases.
  public var horizon: UInt64

  public init(protocolVersion: Int, recordFormat: Int, log: ItemID?, head: UInt64, horizon: UInt64 = 1) {
    self.protocolVersion = protocolVersion
    self.recordFormat = recordFormat
    self.log = log
    self.head = head
    self.horizon = horizon
  }

  /// The hello as the remote answers it.
  package func write(to json: inout JSONWriter) {
    json.object { json in
      json.member("protocol", protocolVersion)
      json.member("format", recordFormat)
      json.key("log")
      if let log { json.value(log) } else { json.null() }
      json.member("head", head)
      if horizon > 1 { json.member("horizon", horizon) }
    }
  }

  /// Reads a remote's hello, leniently (a member an older remote leaves
  /// out has its first value: format 1, no log id, head 0); only the
  /// protocol is required.
  package init(json body: [UInt8]) throws(AnswerProblem) {
    let members = try AnswerMembers(body)
    guard let version = members.integer("protocol") else { throw .helloWithoutProtocol }
    self.init(
      protocolVersion: version, recordFormat: members.integer("format") ?? 1,
      log: members.string("log").flatMap(ItemID.init(canonical:)), head: UInt64(members.integer("head") ?? 0),
      horizon: UInt64(max(members.integer("horizon") ?? 1, 1)))
  }
}
