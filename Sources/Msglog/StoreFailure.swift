import MsglogLMDB

extension MsglogError {
  /// A store's own failure in msglog's words — the one place they are
  /// worded — or nil for an error that is no store's (what a caller's
  /// closure threw passes through `EventLog` as it is).
  ///
  /// The stores throw `MsglogError`s for what they decide themselves (no
  /// database, read-only, a changed read) and let their engine's failures
  /// and damage found in derived rows escape as they are.
  init?(storeFailure error: any Error) {
    switch error {
    case let error as MsglogError:
      self = error
    case let error as LMDBError where error.isOutOfSpace:
      self = .diskFull("the database could not grow (\(error.userMessage))")
    case let error as LMDBError:
      self = .storage("database error: \(error.userMessage)")
    case let damage as DerivedDamage:
      self = .derivedDamage(damage)
    case let error as ReplayError:
      self = .eventDoesNotFit(seq: error.seq, reason: error.reason)
    default:
      return nil
    }
  }

  /// The same for an operation that runs no closure of the caller's: any
  /// error is the store's.
  init(anyStoreFailure error: any Error) {
    self = MsglogError(storeFailure: error) ?? .storage("\(error)")
  }
}
