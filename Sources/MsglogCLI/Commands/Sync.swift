import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// `clone`, `sync` and `status`: a replica (docs/SYNC.md).
extension Invocation {
  /// `--token`, else `MSGLOG_TOKEN`; and `--cacert`.
  var syncOptions: SyncOptions {
    SyncOptions(
      token: args[Options.remoteToken] ?? environment["MSGLOG_TOKEN"].flatMap { $0.isEmpty ? nil : $0 },
      caFile: args[Options.cacert])
  }

  func clone() throws {
    let url = operands[0]
    let report = try EventLog.clone(
      url, into: try location, options: syncOptions,
      configuration: .init(lmdbAssertionHandler: lmdbAssertionHandler))
    if json {
      try stdout.document { json in
        json.object { json in
          json.member("cloned", report.cloned)
          json.member("seq", report.seq)
          json.member("remote", report.remote)
        }
      }
    } else {
      try stdout.line("cloned \(report.cloned) \(report.cloned == 1 ? "event" : "events") from \(report.remote)")
    }
  }

  func sync() throws {
    let log = try openLog(forWriting: true)
    if args.has(Options.syncFollow) {
      guard !args.has(Options.reset) else {
        throw CommandLineError.usage("--reset and --follow exclude each other", hint: "reset first, then follow")
      }
      return try syncLive(log)
    }
    let report = args.has(Options.reset) ? try log.resetReplica(options: syncOptions) : try log.sync(options: syncOptions)
    try print(report)
  }

  /// `sync --follow`: a line (or a JSON object) per round that did
  /// something, until SIGINT or SIGTERM (exit 0).
  private func syncLive(_ log: EventLog) throws {
    let signals = try SignalPipe.install([SIGINT, SIGTERM])
    defer { signals.uninstall() }
    let stderr = self.stderr
    let readEnd = signals.readEnd
    try log.syncLive(options: syncOptions, stop: { SignalPipe.isReadable(readEnd) }) { notice in
      switch notice {
      case .synced(let report):
        try? print(report)
        try? stdout.flush()
      case .waiting(let reason, let seconds):
        stderr.note("msglog: \(reason) (trying again in \(Wording.seconds(.milliseconds(Int(seconds * 1000)))))")
      case .reconnected:
        stderr.note("msglog: syncing with \(EventLog.shown(remote: (try? log.replicaState())??.remote ?? "")) again")
      }
      try? stderr.flush()
    }
  }

  private func print(_ report: EventLog.SyncReport) throws {
    for refusal in report.refused {
      stderr.note("msglog: change \(refusal.change) (\(refusal.op) in \(TerminalText.quoted(refusal.stream))) was refused: \(refusal.error)")
    }
    if json {
      try stdout.document { json in
        json.object { json in
          json.member("pushed", report.pushed)
          json.member("rebased", report.rebased)
          json.key("refused")
          json.array { json in for refusal in report.refused { json.refusal(refusal) } }
          json.member("pulled", report.pulled)
          json.member("seq", report.seq)
        }
      }
    } else {
      try stdout.line(
        "pushed \(report.pushed) (\(report.rebased) rebased, \(report.refused.count) refused), pulled \(report.pulled), at seq \(report.seq)")
    }
  }

  func status() throws {
    let log = try openLog(forWriting: args.has(Options.clear))
    let status = try log.replicaStatus()
    if args.has(Options.clear) { try log.clearRefused() }
    if json {
      try stdout.document { json in
        json.object { json in
          json.member("remote", status.remote)
          json.member("seq", status.seq)
          json.member("remoteSeq", status.remoteSeq)
          json.member("pending", status.pending.count)
          if args.has(Options.verbose) {
            json.member("replica", status.replica)
            json.key("changes")
            json.array { json in
              for change in status.pending {
                json.object { json in
                  json.member("pending", change.change)
                  json.member("op", change.op)
                  json.member("stream", change.stream)
                  json.member("made", change.made)
                  if let conflict = change.conflict { json.member("conflict", conflict) }
                }
              }
            }
          }
          json.key("refused")
          json.array { json in for refusal in status.refused { json.refusal(refusal) } }
        }
      }
      return
    }
    try stdout.line("remote   \(TerminalText.escape(status.remote))")
    try stdout.line("seq      \(status.seq) (the remote's head was \(status.remoteSeq) when last seen)")
    try stdout.line("pending  \(status.pending.count)")
    if args.has(Options.verbose) {
      try stdout.line("replica  \(status.replica.text)")
      for change in status.pending {
        let conflict = change.conflict.map { "  (does not apply now: \(TerminalText.escape($0)))" } ?? ""
        try stdout.line(
          "  change \(change.change)  \(change.op)  \(TerminalText.escape(change.stream.text))  \(change.made.rfc3339)\(conflict)")
      }
    }
    try stdout.line("refused  \(status.refused.count)\(args.has(Options.clear) && !status.refused.isEmpty ? " (cleared)" : "")")
    for refusal in status.refused {
      try stdout.line(
        "  change \(refusal.change)  \(refusal.op)  \(TerminalText.escape(refusal.stream.text))  \(TerminalText.escape(refusal.error))")
    }
  }
}

extension JSONWriter {
  /// `{"pending":N,"op":"…","stream":"…","error":"…"}`.
  mutating func refusal(_ refusal: EventLog.RefusedChange) {
    object { json in
      json.member("pending", refusal.change)
      json.member("op", refusal.op)
      json.member("stream", refusal.stream)
      json.member("error", refusal.error)
    }
  }
}

extension SignalPipe {
  /// Whether a signal arrived (the pipe has a byte), without waiting.
  static func isReadable(_ fd: Int32) -> Bool {
    var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) > 0
  }
}
