import Msglog
import MsglogWire

#if canImport(Glibc)
  import Glibc
#endif

/// `clone`, `sync` and `status`: a replica (docs/SYNC.md).
extension Invocation {
  /// `--token`, else `MSGLOG_TOKEN`; `--cacert`; `--timeout`.
  var syncOptions: SyncOptions {
    get throws {
      var options = SyncOptions(
        token: try args[Options.remoteToken] ?? variable("MSGLOG_TOKEN"),
        caFile: args[Options.cacert])
      if let text = args[Options.syncTimeout] {
        guard let seconds = Self.seconds(text) else {
          throw CommandLineError.usage(
            "--timeout takes a number of seconds greater than 0, not \(TerminalText.quoted(text))",
            hint: "e.g. '--timeout 3600' for an hour")
        }
        options.timeout = seconds
        options.exchangeTimeout = min(options.exchangeTimeout, seconds)
      }
      return options
    }
  }

  /// `900`, `2.5`: seconds, more than 0 and at most a year.
  static func seconds(_ text: String) -> Double? {
    guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }),
      text.utf8.filter({ $0 == UInt8(ascii: ".") }).count <= 1, let seconds = Double(text), seconds > 0,
      seconds <= 366 * 86_400
    else { return nil }
    return seconds
  }

  /// Warns when the token would cross the network readable by anyone.
  private func warnOfAPlainToken(to remote: String, _ options: SyncOptions) {
    guard EventLog.sendsTokenInTheClear(to: remote, options: options) else { return }
    stderr.note(
      "msglog: warning: the token goes to \(EventLog.shown(remote: remote)) over plain http://, "
        + "readable by anyone on the way; use https://")
    try? stderr.flush()
  }

  /// `--cacert` is for an https:// remote's certificate: given for any
  /// other, it would be ignored, which an option never is (SPEC).
  private func checkCertificateAuthority(for remote: String) throws {
    guard let file = args[Options.cacert], !remote.lowercased().hasPrefix("https://") else { return }
    throw CommandLineError.usage(
      "--cacert \(TerminalText.quoted(file)) applies to an https:// remote, not \(EventLog.shown(remote: remote))",
      hint: "leave it out, or give the remote's https:// address")
  }

  func clone() throws {
    let url = operands[0]
    let options = try syncOptions
    try checkCertificateAuthority(for: url)
    warnOfAPlainToken(to: url, options)
    let report: EventLog.CloneReport
    do {
      report = try EventLog.clone(
        url, into: try location, options: options,
        configuration: .init(lmdbAssertionHandler: lmdbAssertionHandler))
    } catch let error as MsglogError {
      throw SyncStopped(error: error, command: .clone)
    }
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
    let options = try syncOptions
    if args.has(Options.syncFollow), args.has(Options.reset) {
      throw CommandLineError.usage("--reset and --follow exclude each other", hint: "reset first, then follow")
    }
    let log = try openLog(forWriting: true)
    let moving = args[Options.remote]
    if let remote = try moving ?? log.replicaState()?.remote {
      try checkCertificateAuthority(for: remote)
      warnOfAPlainToken(to: remote, options)
    }
    let report: EventLog.SyncReport
    do {
      if args.has(Options.syncFollow) {
        // A new address is checked and kept by one sync first.
        if let moving { _ = try log.sync(options: options, movingTo: moving) }
        return try syncLive(log, options)
      }
      report =
        args.has(Options.reset)
        ? try log.resetReplica(options: options, movingTo: moving) : try log.sync(options: options, movingTo: moving)
    } catch let error as MsglogError {
      throw SyncStopped(error: error, command: .sync)
    }
    try print(report)
  }

  /// `sync --follow`: a line (or a JSON object) per round that did
  /// something, until SIGINT or SIGTERM (exit 0).
  private func syncLive(_ log: EventLog, _ options: SyncOptions) throws {
    let signals = try SignalPipe.install([SIGINT, SIGTERM])
    defer { signals.uninstall() }
    let stderr = self.stderr
    try log.syncLive(options: options, stop: [FollowStop(fileDescriptor: signals.readEnd, whenReadable: true)]) {
      notice in
      switch notice {
      case .synced(let report):
        try? print(report)
        try? stdout.flush()
      case .waiting(let reason, let seconds):
        stderr.note(
          "msglog: " + TerminalText.escapingControls("\(reason)")
            + " (trying again in \(Wording.seconds(.milliseconds(Int(seconds * 1000)))))")
      case .reconnected:
        let remote = EventLog.shown(remote: (try? log.replicaState())??.remote ?? "")
        stderr.note("msglog: syncing with " + TerminalText.escapingControls(remote) + " again")
      }
      try? stderr.flush()
    }
  }

  private func print(_ report: EventLog.SyncReport) throws {
    if let horizon = report.resetAtHorizon {
      stderr.note("msglog: reset: history before seq \(horizon) was trimmed at the remote")
    }
    for refusal in report.refused {
      // The reason is the remote's words: escaped, as any text from elsewhere.
      stderr.note(
        "msglog: change \(refusal.change) (\(refusal.op) in \(TerminalText.quoted(refusal.stream))) was refused: "
          + TerminalText.escape(refusal.error))
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
          if let horizon = report.resetAtHorizon { json.member("reset", horizon) }
          if let scrubbed = report.scrubbed { json.member("purged", scrubbed) }
        }
      }
    } else {
      try stdout.line(
        "pushed \(report.pushed) (\(report.rebased) rebased, \(report.refused.count) refused), pulled \(report.pulled), at seq \(report.seq)")
      // A purge was owed (an erase, an unsign, a trim, a start again): the replica purged itself after.
      if let scrubbed = report.scrubbed { try stdout.line(Self.purged(scrubbed, json: false)) }
    }
    switch report.unpurged {
    case nil: break
    case .purgeHeldByReader:
      stderr.note(
        "msglog: what the replica erased or trimmed stays in free pages an older read still holds: "
          + "the next sync, or 'msglog purge', scrubs it once that read has ended")
    case let error?:
      stderr.note(
        "msglog: the purge the replica owed failed (\(error)): the next sync, or 'msglog purge', tries again")
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

/// A clone or a sync that stopped on a library error: worded with hints
/// about the replica (nothing pending is lost; the next sync goes on), not
/// about a write cut off at its commit.
struct SyncStopped: Error {
  enum Command { case clone, sync }
  var error: MsglogError
  var command: Command
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
