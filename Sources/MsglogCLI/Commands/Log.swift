import Msglog
import MsglogPosix

#if canImport(Glibc)
  import Glibc
#endif

/// `log`, and `log --follow`.
extension Invocation {
  func log() throws {
    if args.has(Options.all) && args.has(Options.stream) {
      throw CommandLineError.usage("--all and --stream exclude each other", hint: "--all prints every stream's events")
    }
    let only = args.has(Options.all) ? nil : try stream
    let from = try args.number(Options.from)
    let limit = try args.number(Options.limit) ?? UInt64.max
    let json = json
    if args.has(Options.follow) { return try follow(from: from, stream: only, limit: limit) }
    guard limit > 0 else {
      _ = try read { try $0.headSeq() }
      return
    }
    try read { snapshot in
      if let from { try snapshot.checkHistory(from: from) }
      var printed: UInt64 = 0
      var writer = Format.EventLineWriter()
      try snapshot.forEachEvent(from: from ?? 1, stream: only) { event in
        if json { try writer.write(event, to: stdout) } else { try stdout.line(Format.eventLine(event)) }
        printed += 1
        return printed < limit
      }
      // A replica's pending changes come after its events.
      try snapshot.forEachPendingEvent(stream: only) { change, event, undoesChange in
        guard printed < limit else { return }
        if json {
          try writer.write(pending: change, event, undoesChange: undoesChange, to: stdout)
        } else {
          try stdout.line(Format.eventLine(event, pending: change, undoesChange: undoesChange))
        }
        printed += 1
      }
    }
  }

  /// Prints events as they commit, each flushed at once, until SIGINT,
  /// SIGTERM, a closed stdout (exit 0 for all three) or `limit` events.
  /// While its store is away (a server restarting) it says so on stderr and
  /// tries again, going on after the last event it printed.
  func follow(from: UInt64?, stream: StreamName?, limit: UInt64) throws {
    let log = try openLog(forWriting: false)
    // Started without stdout (held by /dev/null, which polls as nothing
    // ever happens): nobody reads, as when the reader goes away.
    guard limit > 0, !MsglogCLI.isClosed(1) else { return }
    let signals = try SignalPipe.install([SIGINT, SIGTERM])
    defer { signals.uninstall() }
    var printed: UInt64 = 0
    var resumeFrom = from
    let json = json
    var writer = Format.EventLineWriter()
    let stderr = self.stderr
    let location = log.location
    do {
      try log.follow(
        from: from, stream: stream,
        stop: [
          FollowStop(fileDescriptor: signals.readEnd, whenReadable: true),
          FollowStop(fileDescriptor: 1, whenReadable: false),  // stdout's reader went away
        ],
        notices: { notice in
          switch notice {
          case .reconnecting(let error, let delay, let next):
            stderr.note(
              "msglog: " + TerminalText.escapingControls(error.description)
                + " (trying again in \(Wording.seconds(delay)), from seq \(next))")
          case .reconnected:
            stderr.note("msglog: following " + TerminalText.escapingControls(location) + " again")
          }
          try? stderr.flush()  // said now, while it waits
        }
      ) { event in
        if json { try writer.write(event, to: stdout) } else { try stdout.line(Format.eventLine(event)) }
        try stdout.flush()
        printed += 1
        resumeFrom = event.seq + 1
        return printed < limit
      }
    } catch let error as MsglogError where printed > 0 && error.category == .unavailable {
      // Cut off under way by what it does not try again: say from where to
      // go on — not in a database put in the place of the one followed,
      // whose seqs are its own.
      if case .followedDatabaseDisplaced = error { throw error }
      throw FollowerCutOff(error: error, resumeFrom: resumeFrom)
    }
  }
}

/// `log --follow` lost its connection: everything it printed is sound, and
/// a new follower can go on from the event after the last one it printed.
struct FollowerCutOff: Error {
  var error: MsglogError
  /// The seq to resume from (`--from`); nil when it printed nothing and was given no `--from`.
  var resumeFrom: UInt64?
}

/// SIGINT and SIGTERM turned into a readable pipe, so that a follower
/// blocked in `poll` ends cleanly — closing its environment and reader slot
/// — instead of being killed in the middle of a read.
final class SignalPipe {
  private let pipe: WakePipe
  let signals: [Int32]
  /// The pipe's write end, for the handler (which can reach no object).
  nonisolated(unsafe) static var writeEnd: Int32 = -1

  private init(pipe: WakePipe, signals: [Int32]) {
    self.pipe = pipe
    self.signals = signals
  }

  var readEnd: Int32 { pipe.readEnd }

  static func install(_ signals: [Int32]) throws -> SignalPipe {
    let pipe: WakePipe
    do throws(WakePipe.Failure) {
      pipe = try WakePipe()
    } catch {
      throw MsglogError.systemRefused(.signalHandling, errno: error.errno)
    }
    writeEnd = pipe.descriptorToSignal
    var mask = sigset_t()
    sigemptyset(&mask)
    for signal in signals {
      var action = sigaction()
      action.__sigaction_handler.sa_handler = { _ in WakePipe.signal(SignalPipe.writeEnd) }
      sigaction(signal, &action, nil)
      sigaddset(&mask, signal)
    }
    // A parent may have started us with these signals blocked (a test
    // runner, some supervisors do): a follower must still end on them.
    pthread_sigmask(SIG_UNBLOCK, &mask, nil)
    return SignalPipe(pipe: pipe, signals: signals)
  }

  /// The signals' default actions again; the pipe closes with this.
  func uninstall() {
    for signal in signals { Glibc.signal(signal, SIG_DFL) }
    SignalPipe.writeEnd = -1
  }
}
