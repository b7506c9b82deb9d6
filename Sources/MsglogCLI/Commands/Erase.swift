import Msglog

/// `erase ID…` and `erase --sender NAME`: items forgotten for everyone.
extension Invocation {
  func erase() throws {
    let sender = args[Options.eraseSender]
    let log: EventLog
    let erasure: EventLog.Erasure
    if let sender {
      guard operands.isEmpty else {
        throw CommandLineError.usage("erase takes IDs or --sender NAME, not both")
      }
      // Without a stream named (--stream, or MSGLOG_STREAM as every other
      // command reads it): the sender's items in every stream. An erase
      // cannot be undone: a stream the user set must narrow it.
      let named = args.has(Options.stream) || environment["MSGLOG_STREAM"].map { !$0.isEmpty } == true
      let stream = named ? try self.stream : nil
      log = try openLog(forWriting: true)
      erasure = try log.erase(sender: sender, in: stream)
    } else {
      guard !operands.isEmpty else {
        throw CommandLineError.usage("erase needs the IDs of the items to erase, or --sender NAME")
      }
      // Each ID read as a remove's is, by the decoder every door uses.
      var requests: [WriteRequest] = []
      for id in operands {
        var members = WriteMembers()
        members.set(.id, .string(id))
        requests.append(
          try Write(decoding: &members, operation: .erase, door: .command, defaultStream: try stream).request)
      }
      log = try openLog(forWriting: true)
      erasure = try log.erasing(requests)
    }
    // The erase is committed: a purge after it that fails (a reader holds
    // old pages) must not hide it. Its report comes first, then the failure.
    var scrubbed: UInt64? = nil
    var unpurged: MsglogError? = nil
    if args.has(Options.alsoPurge) {
      do { scrubbed = try log.purge(waiting: sayWaiting) } catch let error as MsglogError where erasure.seq != nil {
        unpurged = error
      }
    }
    if erasure.seq == nil {
      stderr.note(
        sender.map {
          "msglog: nothing to erase: no item that is not erased already names sender \(TerminalText.escape($0))"
        }
          ?? "msglog: nothing to erase: \(operands.count == 1 ? "the item was" : "the items were") erased already"
          + ((try? log.read { try $0.historyBegins() }) ?? 1 > 1
            ? " (or removed before the trimmed history, which took \(operands.count == 1 ? "its text" : "their texts"))"
            : ""))
    }
    let made: ReportLost.Made? =
      if let seq = erasure.seq { .erased(seq: seq, purged: scrubbed != nil) } else {
        scrubbed.map { .purged(bytes: $0) }
      }
    try reporting(made) {
      if json {
        var writer = JSONWriter()
        writer.erasure(erasure, purged: scrubbed)
        try stdout.line(writer.text)
      } else if let seq = erasure.seq {
        let n = erasure.erased.count
        try stdout.line(
          "erased \(n) \(n == 1 ? "item" : "items") (\(erasure.events) \(erasure.events == 1 ? "event" : "events")) at seq \(seq)"
        )
      }
      if !json, let scrubbed { try stdout.line(Self.purged(scrubbed, json: false)) }
    }
    if let unpurged, let seq = erasure.seq { throw ErasedButNotPurged(seq: seq, error: unpurged) }
  }

  /// `purge`: what erase left in the database's files, scrubbed.
  func purge() throws {
    let scrubbed = try openLog(forWriting: true).purge(waiting: sayWaiting)
    try reporting(.purged(bytes: scrubbed)) { try stdout.line(Self.purged(scrubbed, json: json)) }
  }

  /// A purge that waits long says for what: it may take ten seconds.
  private func sayWaiting(for holder: String) {
    stderr.note(
      "msglog: purge waits for \(TerminalText.escape(holder)) to end (about ten seconds at most)")
    try? stderr.flush()  // said now, while it waits
  }

  static func purged(_ bytes: UInt64, json: Bool) -> String {
    json ? #"{"purged":\#(bytes)}"# : "purged: \(bytes) bytes scrubbed"
  }
}

/// `erase --purge` made its erase (reported on stdout), and then its purge
/// failed: the failure, with a hint that the erase stands and that a
/// `purge` finishes the job.
struct ErasedButNotPurged: Error {
  let seq: UInt64
  let error: MsglogError
}
