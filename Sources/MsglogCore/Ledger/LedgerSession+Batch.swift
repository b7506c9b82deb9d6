/// A batch: one call's requests, validated and performed in order in this
/// session, with its version check and its rebase (`LedgerSession+Rebase`
/// transforms the first request; later inserts follow it).
extension LedgerSession {
  /// Performs `batch` in order; one outcome per request, nil for one that
  /// changes nothing. A long batch writes its derived rows into the
  /// transaction every `flushInterval` requests, so that it holds bounded
  /// state however long it is.
  ///
  /// - Parameters:
  ///   - lineNumbers: when given (an import's), a refused request's error
  ///     names its line (`MsglogError.line`).
  ///   - progress: called now and then with (done, total).
  package func perform(
    _ batch: WriteBatch, lineNumbers: [Int]? = nil, progress: ((Int, Int) -> Void)? = nil
  ) throws -> [Outcome?] {
    let requests = batch.requests
    guard !requests.isEmpty else { return [] }
    // The version the first request was made at, when it is to be rebased.
    var basis: UInt64? = nil
    if let expectVersion = batch.expectVersion {
      let actual = try version(of: requests[0].stream)
      if actual != expectVersion {
        guard batch.rebase, expectVersion < actual else {
          throw MsglogError.versionConflict(stream: requests[0].stream, expected: expectVersion, actual: actual)
        }
        basis = expectVersion
      }
    }
    // How far the first (rebased) insert moved: later inserts of the batch follow it.
    var shift = 0
    var outcomes: [Outcome?] = []
    outcomes.reserveCapacity(requests.count)
    for (i, request) in requests.enumerated() {
      if i % 1024 == 0 { progress?(i, requests.count) }
      if i % Self.flushInterval == 0 {
        if i > 0 { try finish() }
        try prefetch(idsOf: requests[i..<min(i + Self.flushInterval, requests.count)])
      }
      do {
        if let basis, i == 0 {
          let outcome = try perform(request, rebasingFrom: basis)
          if let outcome, case .insert(let insert) = request.command, let index = insert.index {
            shift = outcome.index - index
          }
          outcomes.append(outcome)
        } else if basis != nil, case .insert(var insert) = request.command, let index = insert.index {
          insert.index = index + shift
          var outcome = try perform(WriteRequest(stream: request.stream, command: .insert(insert)))
          outcome?.rebased = true
          outcomes.append(outcome)
        } else {
          outcomes.append(try perform(request))
        }
      } catch let error as MsglogError where lineNumbers != nil {
        throw MsglogError.line(lineNumbers![i], error)
      }
    }
    progress?(requests.count, requests.count)
    return outcomes
  }
}
