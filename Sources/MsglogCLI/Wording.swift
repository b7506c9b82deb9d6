import Msglog

/// The one place where errors become words, hints and exit codes.
///
/// The library's errors say what went wrong; only here are they told in the
/// command line's terms — which command to run next, which option to use.
package enum Wording {
  /// Prints `msglog: …` (and `hint: …`) on stderr; returns the exit code.
  static func report(_ error: any Error, to stderr: BufferedOutput) -> Int32 {
    let (message, code): (String, Int32)
    var hint: String?
    switch error {
    case OutputError.closed:
      // The reader stopped reading (`msglog export | head -1`): that is
      // what it asked for, so end quietly, as git does.
      return MsglogCLI.ExitCode.success
    case OutputError.failed(let errno):
      (message, hint, code) = ("write error: " + systemMessage(errno), nil, MsglogCLI.ExitCode.failure)
    case let lost as SecretNotShown:
      let token = "token \(TerminalText.quoted(lost.name)) (id \(lost.id))"
      (message, hint, code) = (
        "write error: " + systemMessage(lost.errno),
        lost.revoked
          ? "\(token) was made and revoked again, as its secret could not be shown: add it again"
          : "\(token) was made, but its secret could not be shown: revoke it ('msglog token revoke \(lost.id)') "
            + "and add it again",
        MsglogCLI.ExitCode.failure
      )
    case let lost as ReportLost:
      (message, hint, code) = (
        "write error: " + systemMessage(lost.errno), madeHint(lost.made), MsglogCLI.ExitCode.failure
      )
    case let unpurged as ErasedButNotPurged:
      // Not the purge's own hint: some say that nothing was done.
      (message, _, code) = words(for: unpurged.error)
      let then =
        switch unpurged.error {
        case .purgeHeldByReader: "run 'msglog purge' once that read has ended"
        case .purgeNeedsOwner(_, let owner): "run 'msglog purge' as \(owner), the role that made the schema"
        default: "run 'msglog purge' to scrub what it left"
        }
      hint = "the erase was made (seq \(unpurged.seq)); " + then
    case let error as CommandLineError:
      (message, hint, code) = (error.message, error.hint, error.exitCode)
    case let cut as FollowerCutOff:
      (message, hint, code) = (
        cut.error.description, followerHint(resumeFrom: cut.resumeFrom), MsglogCLI.ExitCode.failure
      )
    case let stopped as SyncStopped:
      (message, hint, code) = words(for: stopped.error)
      hint = syncHint(for: stopped) ?? hint
    case let error as MsglogError:
      (message, hint, code) = words(for: error)
    default:
      (message, hint, code) = ("\(error)", nil, MsglogCLI.ExitCode.failure)
    }
    // A part no message quoted (a path given with --db) cannot reprogram the terminal.
    stderr.note("msglog: " + TerminalText.escapingControls(message))
    if let hint { stderr.note("hint: " + TerminalText.escapingControls(hint)) }
    return code
  }

  /// What a write whose report was lost made — its seqs, or a replica's
  /// pending changes — and where to see it.
  static func madeHint(_ made: ReportLost.Made) -> String? {
    let lost = "only the report was lost"
    switch made {
    case .changes(let outcomes):
      guard let first = outcomes.first, let last = outcomes.last else { return nil }
      let what = outcomes.count == 1 ? "the change was made" : "the \(outcomes.count) changes were made"
      if let firstChange = first.pending, let lastChange = last.pending {
        return "\(what) (\(pendingChanges(firstChange...lastChange))); \(lost): 'msglog status -v' lists them"
      }
      return
        "\(what) (\(seqs(first.event.seq...last.event.seq))); \(lost): 'msglog log --from \(first.event.seq)' shows it"
    case .imported(let result):
      let events = result.imported == 1 ? "the event was imported" : "the \(result.imported) events were imported"
      if let changes = result.pending {
        return "\(events) (\(pendingChanges(changes))); \(lost): 'msglog status -v' lists them"
      }
      let from = result.head + 1 - UInt64(result.imported)
      return "\(events) (\(seqs(from...result.head))); \(lost): 'msglog log --from \(from)' shows "
        + (result.imported == 1 ? "it" : "them")
    case .erased(let seq, let purged):
      return "the erase was made (seq \(seq))\(purged ? ", and the purge after it" : ""); \(lost): "
        + "'msglog log --from \(seq)' shows it"
    case .trimmed(let horizon):
      return "the trim was made (history now begins at seq \(horizon)); \(lost)"
    case .purged(let bytes):
      return "the purge was made (\(bytes) bytes scrubbed); \(lost)"
    }
  }

  private static func seqs(_ range: ClosedRange<UInt64>) -> String {
    range.count == 1 ? "seq \(range.lowerBound)" : "seqs \(range.lowerBound)…\(range.upperBound)"
  }

  private static func pendingChanges(_ range: ClosedRange<UInt64>) -> String {
    range.count == 1 ? "pending change \(range.lowerBound)" : "pending changes \(range.lowerBound)…\(range.upperBound)"
  }

  /// The message, the hint and the exit code for a library error.
  package static func words(for error: MsglogError) -> (String, String?, Int32) {
    let code: Int32
    switch error.category {
    case .invalidInput: code = MsglogCLI.ExitCode.usage
    case .conflict: code = MsglogCLI.ExitCode.conflict
    default: code = MsglogCLI.ExitCode.failure
    }
    switch error {
    case .line:
      // A bad import line is a refused import (exit 1), whatever its class.
      let (_, hint, _) = words(for: error.innermost)
      return (error.description, hint, MsglogCLI.ExitCode.failure)
    case .invalidInput(.rebaseWithoutVersion):
      // The rule every door words, in the command line's names for the two.
      return (
        InvalidInput.rebaseWithoutVersion(rebase: "--rebase", expectVersion: "--expect-version N"),
        "e.g. 'msglog move 3 0 --expect-version 17 --rebase'", code
      )
    case .unrepairable:
      return (
        "the log itself is damaged, so --repair cannot help",
        "--repair rebuilds derived tables from sound events; restore the log from an export or backup", code
      )
    default:
      return (error.description, hint(for: error), code)
    }
  }

  /// What the user can do about it, in the command line's terms.
  static func hint(for error: MsglogError) -> String? {
    switch error {
    case .invalidInput(.emptySender): return "leave out --sender for a message without one"
    case .invalidInput(.prefixTooShort): return "'msglog list' prints the first 8 characters of each id"
    case .versionConflict(_, let expected, let actual) where expected > actual:
      return "the stream is not at that version yet: 'msglog list --json' says the version it is at"
    case .versionConflict: return "someone else changed it; re-read with 'msglog list' and retry"
    case .idAlreadyUsed, .idUsedInAnotherStream: return "an id is inserted at most once, even after it was removed"
    case .itemInAnotherStream: return "select its stream with --stream"
    case .followedDatabaseDisplaced:
      return "a follower keeps to the database it opened; start it again for the one at that path now"
    case .writtenDatabaseDisplaced: return "open the log again to write into the database at that path now"
    case .ambiguousPrefix: return "give more characters of the id"
    case .itemRemoved: return "'msglog restore ID' brings a removed item back"
    case .itemIsLive: return "it is in the list now ('msglog list'); only what was removed can be restored"
    case .noRemovedPrefixMatch: return "'msglog log' shows what was removed, with full ids"
    case .alreadyUndone(_, let by): return "undo event \(by) to redo it ('msglog undo \(by)')"
    case .nothingToUndo: return "'msglog log' shows the stream's events; 'msglog undo SEQ' undoes one by its seq"
    case .noSuchEvent, .eventInAnotherStream, .eventNotInStream:
      return "'msglog log' shows the stream's events and their seqs"
    case .outOfRangeAtVersion: return "give indices of the list as it was at the version given with --expect-version"
    case .seqBeyondHead(_, let head): return head == 0 ? "the log is empty" : nil
    case .corruptedRecord: return "run 'msglog verify' for a full report; nothing after this point was printed"
    case .corruptedLog, .eventDoesNotFit:
      return "run 'msglog verify' for a full report; restore the log from an export or a backup"
    case .derivedDamage:
      return "nothing was changed; run 'msglog verify', and 'msglog verify --repair' to rebuild them from the log"
    case .outdatedFormat: return "run 'msglog verify --repair' once to rebuild them; the log itself is unchanged"
    case .noDatabase(_, _, let empty):
      return empty
        ? "a first 'msglog append TEXT' creates one"
        : "a first 'msglog append TEXT' creates it; choose another with --db PATH or MSGLOG_DB"
    case .anotherProgramsDatabase: return "msglog writes only into its own databases; choose another with --db PATH"
    case .readOnly(_, let store, _):
      // A server's database is read-only on a standby, or by default_transaction_read_only.
      if store == .postgres {
        return
          "every read command still works; writes need a primary server and a role without default_transaction_read_only"
      }
      return "every read command still works; to change it, copy it somewhere you may write"
    case .permissionDenied(_, _, _, let missing): return privilegeHint(missing)
    case .missingTables:
      return "the owner of schema msglog makes them with 'msglog init' (once); "
        + "then grant this role its privileges on them (docs/POSTGRES.md, \"The team recipe\")"
    case .changedDuringRead:
      return "it is read-only to you, so msglog reads it without a lock and cannot hold writers off; try again"
    case .connectionLost:
      return
        "a read may simply be run again once the server is back; a write cut off at its commit may have "
        + "committed: look with 'msglog log' before running it again"
    case .readCancelled:
      return "nothing was changed; read again (a standby waits longer before it cancels a read with a larger "
        + "max_standby_streaming_delay, or cancels none for this with hot_standby_feedback on)"
    case .newerFormat: return "use the newer msglog that wrote it"
    case .replicaSecretRefused(_, true):
      return "nothing was pushed; if another replica took this one's id, 'msglog sync --reset' copies the remote "
        + "afresh under a new id and pushes the pending changes from there"
    case .replicaSecretRefused(_, false): return "the replica's msglog must send its secret: upgrade it"
    case .purgeHeldByReader: return "run 'msglog purge' once that read has ended"
    case .purgeNeedsOwner(_, let owner):
      return "run 'msglog purge' as \(owner), the role that made the schema ('msglog init'); nothing was done"
    case .purgeLeftStatistics:
      return "'msglog purge' as a superuser, or as the database's owner when it owns msglog's tables too, "
        + "clears them (a view on msglog.events.record must be dropped first)"
    case _ where error.isLostTrack:
      return "nothing was pushed; if the remote was restored from an older copy, or this replica from a backup "
        + "(or copied), 'msglog sync --reset' copies the remote afresh under a new id and pushes the pending "
        + "changes from there"
    case .unacceptableRecord:
      return "nothing of that page was taken in; the remote's log holds a record no msglog write may make "
        + "('msglog verify' on the remote names it): its operator must mend it"
    case .cannotBackUp(_, .insideDatabase):
      return "give a path outside the database's directory that does not exist yet"
    case .cannotBackUp(_, .cannotCreate):
      return "give a new path in a directory that exists and may be written; "
        + "the backup is made there whole or not at all"
    case .cannotBackUp: return "give a path that does not exist yet; the backup is made there whole or not at all"
    case .backupNotSupported:
      return "use PostgreSQL's own tools (pg_dump, pg_basebackup), or 'msglog export > FILE' for a copy of the log"
    case .diskFull:
      return "nothing of this command was written, and everything before it is intact; free some space and retry"
    case .lmdbFailure(.fileSizeLimit):
      return "nothing of this command was written, and everything before it is intact; raise the limit "
        + "('ulimit -f unlimited', LimitFSIZE=infinity) and retry"
    case .lmdbFailure(.fileCutShort):
      return "nothing was written (a write would hide the pages lost); restore the database from a backup, "
        + "or save what can be read with 'msglog export' and import that into a new one"
    case .tokenRefused: return "give the remote's token in MSGLOG_TOKEN (or with --token); its operator has it"
    case .pushRefused:
      return "what the remote holds was pulled all the same; the changes stay pending ('msglog status') "
        + "until a token that may write pushes them"
    case .remoteForbids: return "the remote's operator decides who may do what (the token's rights, --allow-host)"
    case .untrustedRemote(let remote, _) where remote.hasPrefix("https://"):
      return "if you trust it, give the authority that signed its certificate with --cacert FILE"
    case .remoteFault(_, .redirected):
      return "if the log has moved there, 'msglog sync --remote URL' syncs with it at its new address"
    case .remoteFault(_, .outcomeNotBorneOut(let change, _, _)):
      return "change \(change) stays pending, nothing of it dropped; the remote is not doing what it says"
    case .remoteFault:
      return "nothing of that answer was taken in, and the replica's own log is sound; tell the remote's operator"
    default: return nil
    }
  }

  /// A stopped clone's or sync's hint: nothing pending is lost.
  static func syncHint(for stopped: SyncStopped) -> String? {
    let again =
      stopped.command == .clone
      ? "nothing was made: clone again once the remote answers"
      : "nothing pending is lost: 'msglog sync' goes on where this one stopped"
    switch stopped.error {
    case .syncTimedOut: return again + "; --timeout SECONDS gives a slow remote longer"
    case .connectionLost, .cannotConnect, .readCancelled: return again
    default: return nil
    }
  }

  /// A follower's hint: it wrote nothing, and it can go on where it stopped
  /// (a writer's hint, about a commit cut off, would be wrong here).
  /// A short wait in seconds, as a person reads it: `0.1 s`, `5 s`.
  static func seconds(_ duration: Duration) -> String {
    let (whole, atto) = duration.components
    let tenths = atto / 100_000_000_000_000_000
    return tenths == 0 ? "\(whole) s" : "\(whole).\(tenths) s"
  }

  static func followerHint(resumeFrom: UInt64?) -> String {
    guard let resumeFrom else { return "nothing is lost: follow again once the server is back" }
    return "nothing is lost: once the server is back, 'msglog log --follow --from \(resumeFrom)' "
      + "(with the same options) goes on after the last event printed"
  }
}
