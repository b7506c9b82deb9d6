/// What a remote keeps of one replica (docs/SYNC.md, "The guarantees"): how
/// many of its changes are done, from which change on every outcome is
/// kept, and the SHA-256 of the secret that proves the replica is itself.
///
/// A replica pushes its pending changes from the first one it has not
/// settled, so a push that starts at change K says it settled every change
/// before K: the remote then forgets what it kept of those that appended
/// nothing (refused or unchanged: no event shows them) and keeps only the
/// applied ones (their events are in the log anyway, and an undo of an
/// earlier change is resolved through them). What one replica id leaves
/// beside the events is so bounded by one push: 256 outcomes.
package struct ReplicaProgress: Sendable {
  /// Changes 1…done are done here.
  package var done: UInt64
  /// Every change from this one to `done` has its outcome; below it only
  /// the applied ones do (the others were settled by the replica and forgotten).
  package var keptFrom: UInt64
  /// The hash of the replica's secret; nil for a replica whose pushes
  /// began before replicas had secrets (the first push carrying one claims it).
  package var secret: SHA256.Digest?

  package init(done: UInt64 = 0, keptFrom: UInt64 = 1, secret: SHA256.Digest? = nil) {
    self.done = done
    self.keptFrom = keptFrom
    self.secret = secret
  }

  /// Whether `change` is one whose outcome the remote may have forgotten
  /// (it appended nothing and the replica settled it).
  package func mayHaveForgotten(_ change: UInt64) -> Bool { change < keptFrom && change <= done }
}
