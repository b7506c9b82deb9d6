/// A log as a replica's remote (docs/SYNC.md): the three calls of the sync
/// protocol, which `msglog serve` answers over HTTP and a replica makes in
/// process on a `postgres://` log.
extension EventLog {
  /// The records a pull page holds at most, and its bytes (past one record).
  package static let pullPageRecords = 4096
  package static let pullPageBytes = 1 << 20

  /// What this log says to a replica first.
  package func syncHello() throws -> RemoteHello {
    try remoteRead { sync in
      RemoteHello(
        protocolVersion: syncProtocolVersion, recordFormat: Int(EventRecord.formatVersion3), log: try sync.logID(),
        head: try sync.headSeq())
    }
  }

  /// Does a replica's changes, in order, each at most once, in one
  /// transaction: the outcome of every change (the stored one for a change
  /// done before) and the head after.
  package func doChanges(_ changes: [ReplicaChange], by replica: ItemID, log: ItemID) throws -> PushAnswer {
    try write(touching: Array(Set(changes.map(\.stream))).sorted()) { session in
      guard let sync = session.writer as? any SyncStateWriter else {
        throw MsglogError.incompatibleRemote(remote: location, reason: "its store keeps no sync state")
      }
      try checkRemote(sync, log: log)
      let outcomes = try session.perform(pushed: changes, by: replica, recordingIn: sync)
      return PushAnswer(head: session.nextSeq - 1, outcomes: outcomes)
    }
  }

  /// Calls `body` with the records after `seq`, in order — at most `limit`,
  /// and no more than `pullPageBytes` past the first — once the record at
  /// `seq` is found to be the replica's (`check`); returns the head.
  package func records(
    after seq: UInt64, check: UInt32?, log: ItemID, limit: Int, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void
  ) throws -> UInt64 {
    try remoteRead { sync in
      try checkRemote(sync, log: log)
      let head = try sync.headSeq()
      guard seq <= head else {
        throw MsglogError.anotherLog(
          remote: location, reason: "it is at seq \(head), behind the replica (at seq \(seq)): restored from an older copy?")
      }
      if seq > 0, let check {
        let found = try sync.withRecord(at: seq) { $0.loadBigEndian(fromByteOffset: $0.count - 4, as: UInt32.self) }
        guard found == check else {
          throw MsglogError.anotherLog(remote: location, reason: "its event at seq \(seq) is not the replica's")
        }
      }
      var sent = 0
      var bytes = 0
      if limit > 0 && seq < head {
        try sync.forEachRecord(from: seq + 1) { recordSeq, record in
          try body(recordSeq, record)
          sent += 1
          bytes += record.count
          return sent < limit && bytes < Self.pullPageBytes && recordSeq < head
        }
      }
      return head
    }
  }

  /// A read of the log's own tables (never a local view: a replica is no remote).
  private func remoteRead<R>(_ body: (any SyncStateReader) throws -> R) throws -> R {
    try readingBase { reader in
      guard let sync = reader as? any SyncStateReader else {
        throw MsglogError.incompatibleRemote(remote: location, reason: "its store keeps no sync state")
      }
      return try body(sync)
    }
  }

  /// Refuses a replica of another log.
  private func checkRemote(_ sync: any SyncStateReader, log: ItemID) throws {
    if let replicas = sync as? any ReplicaStateReader, try replicas.replicaState() != nil {
      throw MsglogError.incompatibleRemote(remote: location, reason: "it is a replica, which syncs with its own remote")
    }
    guard let id = try sync.logID(), id == log else {
      throw MsglogError.anotherLog(remote: location, reason: "its log's id is not the one the replica was cloned from")
    }
  }
}

extension EventLog {
  /// The outcomes of a replica's changes done here, in change order (tests, `verify`).
  package func syncOutcomes(of replica: ItemID) throws -> [(UInt64, ChangeOutcome)] {
    try readingBase { reader in
      guard let sync = reader as? any SyncStateReader else { return [] }
      var outcomes: [(UInt64, ChangeOutcome)] = []
      try sync.forEachOutcome(by: replica) { change, outcome in
        outcomes.append((change, outcome))
        return true
      }
      return outcomes
    }
  }
}
