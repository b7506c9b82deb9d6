/// One call of `EventLog.perform`, waiting to be committed with others
/// (see `CommitQueue`).
struct PendingWrite {
  var requests: [WriteRequest]
  var expectVersion: UInt64?
}
