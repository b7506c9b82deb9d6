import MsglogCore

extension LogSnapshot {
  /// The stream's list without its texts, now or right after `seq`: what a
  /// server holds while a slow client takes the items a few at a time.
  package func order(of stream: StreamName, at seq: UInt64? = nil) throws -> StreamOrder {
    do { return try Replay.order(of: stream, at: seq, in: reader) } catch {
      throw MsglogError(anyStoreFailure: error)
    }
  }

  /// The full items of a run of an order's slots (their texts, senders and
  /// times, from the records, which never change).
  package func items(_ slots: ArraySlice<Slot>) throws -> [Item] {
    do { return try Replay.items(slots, in: reader) } catch { throw MsglogError(anyStoreFailure: error) }
  }
}
