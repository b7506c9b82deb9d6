import MsglogCore

/// A clone's pull built the way `import` builds a new database
/// (`BulkImport`): the records appended as the pages arrive, the derived
/// rows built in memory and written table by table at the end, in one
/// transaction of the staging database that nobody else opens. A clone
/// through the ledger cost 3.17× `export | import` of the same log.
///
/// The replica keeps the remote's bytes: each record the bulk path would
/// write must be the record the remote sent, byte for byte (seq, stream,
/// version, time, op, indices, text). Anything else — a record the bulk
/// path does not build (an edit, a restore, an undo, a replica's change),
/// one in an older layout, one that does not follow from those before it —
/// gives up (`BulkImport.Unfit`) before anything is committed, and the
/// clone pulls through the ledger, which takes it or names the remote's
/// fault exactly as it always has.
extension EventLog {
  /// The most events a clone builds in bulk. The room is taken before the
  /// first page arrives, from the head the remote's hello claims (about 40
  /// bytes an event): a remote that lies costs at most this much memory,
  /// and a bigger log goes through the ledger.
  static let bulkCloneEvents = 1 << 23

  /// Pulls every event of `remote` into this empty replica in bulk and
  /// returns how many; nil when the bulk path does not build this log
  /// (nothing was committed: the caller pulls through the ledger).
  /// `claimed` is the remote's head as its hello said.
  func bulkPull(from remote: any SyncRemote, claimed: UInt64) throws -> Int? {
    guard claimed > 0, claimed <= UInt64(Self.bulkCloneEvents), store.loadsInBulk else { return nil }
    // Room for what is written while the clone runs, too.
    let capacity = Int(claimed + claimed / 16 + 1024)
    do {
      // About what an import of these events takes; a fuller map is doubled and the pull run again.
      return try store.write(reserving: capacity * 160, touching: []) { writer in
        guard let loader = writer as? any BulkLoading, let replicas = writer as? any ReplicaStateWriter,
          var state = try replicas.replicaState(), try writer.headSeq() == 0
        else { throw BulkImport.Unfit() }
        var build = try BulkImport(
          writer: loader, now: configuration.clock(),
          checkpointInterval: UInt64(configuration.checkpointInterval), capacity: capacity)
        // Pulled one page ahead, on a thread of its own.
        guard let pages = PagesAhead(remote: remote, logID: state.log) else { throw BulkImport.Unfit() }
        defer { pages.stop() }
        var head: UInt64 = 0
        pulling: while true {
          let page: RecordPage
          let pageEvents: [Event]
          switch pages.next() {
          case .end: break pulling
          case .failed(let error): throw error
          case .page(let next, let events): (page, pageEvents) = (next, events)
          }
          try loader.appendEvents { append in
            for (event, record) in zip(pageEvents, page.records) {
              // `perform` refuses what the bulk path does not build (an origin, an erasure).
              let request = try WriteRequest(recreating: event)
              try build.perform(request) { built, bytes in
                guard bytes.elementsEqual(record) else { throw BulkImport.Unfit() }
                try append(built, bytes)
              }
            }
          }
          guard build.nextSeq - 1 == pageEvents.last!.seq else { throw BulkImport.Unfit() }
          head = build.nextSeq - 1
        }
        try build.finish()
        state.remoteHead = head
        try replicas.putReplicaState(state)
        return Int(head)
      }
    } catch is BulkImport.Unfit {
      return nil
    }
  }
}
