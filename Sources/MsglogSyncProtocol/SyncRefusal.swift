import MsglogCore

/// A sync call a remote refuses whole, nothing done: 409 (403 for a
/// secret that is not the replica's) with `{"error","kind"}` — the remote's
/// words for a person, and the kind a replica tells the refusal by — and
/// `"replica"` for a secret.
package struct SyncRefusal: Error, Equatable, Sendable {
  package enum Kind: String, Sendable {
    /// The replica and the remote are not copies of one log.
    case anotherLog = "another-log"
    /// The two cannot sync: a newer protocol.
    case incompatible
    /// The remote does not hold the replica's changes as the replica does:
    /// a change out of order, or forgotten (restored from an older copy?).
    /// An older replica reads it as `incompatible`, as it was sent before.
    case lostTrack = "lost-track"
    /// The push's secret is not the replica's (403).
    case replicaSecret = "replica-secret"
  }

  package var kind: Kind
  /// The remote's words.
  package var message: String
  /// The replica whose secret was refused.
  package var replica: ItemID?

  package init(_ kind: Kind, _ message: String, replica: ItemID? = nil) {
    self.kind = kind
    self.message = message
    self.replica = replica
  }

  package var status: Int { kind == .replicaSecret ? 403 : 409 }

  package var json: [UInt8] {
    var json = JSONWriter()
    json.object { json in
      json.member("error", message)
      json.member("kind", kind.rawValue)
      if let replica { json.member("replica", replica) }
    }
    return json.take()
  }

  /// The refusal an answer of `status` says, or nil when it is none: a
  /// kind the protocol does not have, or a secret's kind on another status.
  package init?(status: Int, json body: [UInt8]) {
    guard let members = try? AnswerMembers(body), let text = members.string("kind"), let kind = Kind(rawValue: text),
      kind != .replicaSecret || status == 403
    else { return nil }
    self.init(
      kind, members.string("error") ?? "it answered \(status)",
      replica: members.string("replica").flatMap(ItemID.init(canonical:)))
  }
}
