extension EventLog {
  /// Seq of the last event (0 for an empty log).
  public func headSeq() throws -> UInt64 { try reading { try $0.headSeq() } }

  /// Every stream with its counters.
  public func streams() throws -> [StreamCounters] { try reading { try $0.streams() } }

  /// The stream's current items (use `read` and `forEachItem` for a long stream).
  public func items(of stream: StreamName = .main) throws -> StreamContents {
    try reading { try $0.items(of: stream) }
  }

  /// The stream as it was right after `seq` (nil: a full replay to the head).
  public func replay(_ stream: StreamName = .main, at seq: UInt64? = nil) throws -> StreamContents {
    try reading { try $0.replay(stream, at: seq) }
  }

  /// The events from `seq` on, at most `limit` of them, only `stream`'s when given.
  public func events(from seq: UInt64 = 1, limit: Int = .max, stream: StreamName? = nil) throws
    -> [Event]
  {
    try reading { snapshot in
      var events: [Event] = []
      guard limit > 0 else { return events }
      try snapshot.forEachEvent(from: seq, stream: stream) {
        events.append($0)
        return events.count < limit
      }
      return events
    }
  }

  /// Every event (only `stream`'s when given), oldest first, as `export`
  /// writes them; what `body` throws passes through.
  public func export(stream: StreamName? = nil, _ body: (Event) throws -> Void) throws {
    try read { snapshot in
      try snapshot.forEachEvent(stream: stream) {
        try body($0)
        return true
      }
    }
  }

  /// The change set from the stream as of seq `a` to the stream as of seq `b`.
  public func diff(_ stream: StreamName = .main, from a: UInt64, to b: UInt64) throws -> StreamDiff {
    try reading { try $0.diff(stream, from: a, to: b) }
  }

  /// Checks every record, seq contiguity, the replay and every derived
  /// table; `progress` is called now and then.
  public func verify(progress: ((VerifyProgress) -> Void)? = nil) throws -> VerifyReport {
    try reading { try $0.verify(progress: progress) }
  }
}
