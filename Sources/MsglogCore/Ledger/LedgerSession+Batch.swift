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
    let basis = try rebaseBasis(of: batch, lineNumbers: lineNumbers)
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

  /// `batch`'s version check: the version its first request was made at
  /// when that request is to be rebased; nil when the stream is at the
  /// version expected (or none is). Throws `versionConflict` unless the
  /// batch rebases from an older version. Also the local view's check.
  package func rebaseBasis(of batch: WriteBatch, lineNumbers: [Int]? = nil) throws -> UInt64? {
    guard let expectVersion = batch.expectVersion, let first = batch.requests.first else { return nil }
    // The requests' own values first (`perform` checks them again): a
    // conflict tells a script to read again and retry, which could only
    // end in the refusal of an empty text or one over 1 MiB. Named by its
    // line, as `perform` would name it.
    for (i, request) in batch.requests.enumerated() {
      do {
        try Limits.check(request)
      } catch {
        guard let lineNumbers else { throw error }
        throw MsglogError.line(lineNumbers[i], error)
      }
    }
    let actual = try version(of: first.stream)
    guard actual != expectVersion else { return nil }
    guard batch.rebase, expectVersion < actual else {
      throw MsglogError.versionConflict(stream: first.stream, expected: expectVersion, actual: actual)
    }
    return expectVersion
  }
}
