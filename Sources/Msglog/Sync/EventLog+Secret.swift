/// A replica's proof that it is itself (docs/SYNC.md, "A replica proves it
/// is itself"): the secret `clone` makes, sent with every push.
extension EventLog {
  /// `state` with its secret. A replica cloned before replicas had secrets
  /// gets one now, kept in its own transaction before it is ever sent, so
  /// a push cut short never leaves the remote holding a secret the replica
  /// lost: its first push carrying it claims its id at the remote.
  func givingSecret(_ state: ReplicaState) throws -> ReplicaState {
    guard state.secret == nil else { return state }
    return try writing { writer in
      guard let replicas = writer as? any ReplicaStateWriter, var kept = try replicas.replicaState() else {
        throw MsglogError.notAReplica(location: location)
      }
      if kept.secret == nil {
        kept.secret = .random()
        try replicas.putReplicaState(kept)
      }
      var given = state
      given.secret = kept.secret
      return given
    }
  }

  /// Whether a record a replica could not take in is the remote's fault —
  /// values past the limits, an event that does not apply — rather than
  /// the replica's own trouble (its tables damaged, its disk full).
  static func isTheRecordsFault(_ error: MsglogError) -> Bool {
    switch error.category {
    case .invalidInput, .refused, .notFound, .conflict: return true
    case .damaged, .forbidden, .incompatible, .unavailable, .gone: return false
    }
  }
}
