extension MsglogError {
  /// A store's failure as a `MsglogError`, or nil for an error that is no
  /// store's (what a caller's closure threw passes through `EventLog` as
  /// it is).
  ///
  /// The stores throw `MsglogError`s — their engines' failures worded by
  /// each store, carrying which store it is (`MsglogError.Store`) — and let
  /// damage found in derived rows and replay escape in the core's types.
  init?(storeFailure error: any Error) {
    switch error {
    case let error as MsglogError:
      self = error
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
    self = MsglogError(storeFailure: error) ?? .foreignFailure(type: "\(type(of: error))", words: "\(error)")
  }
}
