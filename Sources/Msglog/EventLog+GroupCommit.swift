extension EventLog {
  /// A call with at most this many requests may share its transaction.
  static let groupedRequests = 64

  /// Commits the calls of a batch in one transaction, each with its own
  /// outcome; a call that came alone goes straight to the store. A call
  /// refused there is taken back (`LedgerSession.rewind`) and the others go
  /// on; if one could not be taken back (it had written something), the
  /// transaction is abandoned and each call runs alone. `sent` is the
  /// store's word that the commit is on its way (`CommitQueue`).
  func commit(_ tickets: [CommitQueue<WriteBatch, [Outcome?]>.Ticket], whenSent sent: () -> Void) throws {
    guard tickets.count > 1 else {
      let batch = tickets[0].work
      tickets[0].result = Result { try transact(batch, whenSent: sent) }
      return
    }
    var streams: [StreamName] = []
    for ticket in tickets {
      for request in ticket.work.requests where !streams.contains(request.stream) { streams.append(request.stream) }
    }
    // Set when a refused call cannot be taken back: the transaction is
    // abandoned (what that throws is worded as a store's on the way out).
    let abandoned = Flag()
    let results: [Result<[Outcome?], any Error>]
    do {
      results = try write(touching: streams.count > 8 ? [] : streams, whenSent: sent) { session in
        try tickets.map { ticket in try perform(ticket.work, sharing: session, abandoned: abandoned) }
      }
    } catch {
      guard abandoned.isSet else { throw error }
      for ticket in tickets {
        let batch = ticket.work
        ticket.result = Result { try transact(batch) }
      }
      return
    }
    for (ticket, result) in zip(tickets, results) { ticket.result = result }
  }

  /// One call's requests in a session shared with other calls, taken back
  /// when refused. A refusal, or damage found on this call's way (its own),
  /// is this call's outcome; the store's own failures (a map to grow, a head
  /// that moved, a lost server) are the whole transaction's, and so is a
  /// refusal that cannot be taken back (`abandoned` then set).
  private func perform(_ batch: WriteBatch, sharing session: LedgerSession, abandoned: Flag) throws -> Result<
    [Outcome?], any Error
  > {
    let mark = session.mark()
    do {
      return .success(try session.perform(batch))
    } catch let error where error is MsglogError || error is DerivedDamage {
      guard session.rewind(to: mark) else {
        abandoned.isSet = true
        throw error
      }
      return .failure(MsglogError(anyStoreFailure: error))
    }
  }

  /// Whether a batch was abandoned, set inside the transaction's closure
  /// (a class: Swift 6.3.1 crashed on a captured `var` there).
  private final class Flag {
    var isSet = false
  }
}
