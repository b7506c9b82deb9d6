/// One call of `EventLog.perform`, waiting to be committed with others
/// (see `CommitQueue`).
struct PendingWrite {
  var requests: [WriteRequest]
  var expectVersion: UInt64?
  /// Rebase the first request from `expectVersion` when the stream moved on.
  var rebase = false
}
