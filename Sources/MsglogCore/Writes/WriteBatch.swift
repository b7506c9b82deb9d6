/// The requests of one call, in the order they apply, with the version of
/// the first one's stream they were made at: what a door hands the ledger
/// (`LedgerSession.perform(_:lineNumbers:progress:)`), all or none.
package struct WriteBatch: Sendable {
  package let requests: [WriteRequest]
  /// Refuse unless the first request's stream is at this version.
  package let expectVersion: UInt64?
  /// Instead of refusing when the stream has moved past `expectVersion`,
  /// apply the first request as meant there (later inserts follow it).
  package let rebase: Bool

  /// Checks what goes with `rebase`, for every door at once: the version
  /// it is made at, and a first operation that rebases (`WriteOperation`).
  package init(_ requests: [WriteRequest], expectVersion: UInt64? = nil, rebase: Bool = false) throws(MsglogError) {
    if rebase {
      guard expectVersion != nil else { throw .invalidInput(.rebaseWithoutVersion) }
      if let first = requests.first, !first.command.operation.rebases {
        throw .invalidInput(.write("\(first.command.operation.withArticle) takes no \"rebase\""))
      }
    }
    self.requests = requests
    self.expectVersion = expectVersion
    self.rebase = rebase
  }

  /// One write (a route's, a command's).
  package init(_ write: Write) throws(MsglogError) {
    try self.init([write.request], expectVersion: write.expectVersion, rebase: write.rebase)
  }

  /// The streams the requests touch, for a store that fetches their state
  /// with the transaction's first round trip; none (fetch as they come)
  /// when there are more than 8.
  package var streams: [StreamName] {
    var streams: [StreamName] = []
    for request in requests where !streams.contains(request.stream) {
      streams.append(request.stream)
      if streams.count > 8 { return [] }
    }
    return streams
  }

  /// What the requests may add to the database, records plus derived rows,
  /// for the map to grow once ahead of the write: a generous estimate is
  /// free (the map is address space). Nothing for a single request.
  package var estimatedBytes: Int { requests.count > 1 ? Self.estimatedBytes(of: requests) : 0 }

  package static func estimatedBytes(of requests: [WriteRequest]) -> Int {
    requests.reduce(0) { total, request in
      if case .insert(let insert) = request.command { return total + 2 * insert.text.utf8.count + 512 }
      return total + 256
    }
  }
}
