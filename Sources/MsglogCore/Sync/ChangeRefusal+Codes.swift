/// Every error a change can be refused with, by its code and data — the
/// one table of them, both ways. A new reason is a case of `MsglogError`
/// (its words in `description`), and its line here in each of the two
/// functions: `coded` names its code and data, `error(code:)` reads them
/// back. `SyncCodecTests` checks every code round-trips.
///
/// Codes are kebab-case; a datum is named as docs/SYNC.md lists it. An
/// error without a code (the store's failures, or a reason only a command
/// can have, such as an id prefix) refuses no change: the push fails.
extension ChangeRefusal {
  /// One datum of a reason, as JSON holds it.
  package enum Argument: Equatable, Sendable {
    case id(ItemID)
    case number(UInt64)
    case stream(StreamName)
    case text(String)
    case time(Timestamp)
  }

  /// The code and data of `error`; nil for an error no change is refused with.
  package static func coded(_ error: MsglogError) -> (code: String, arguments: [(StaticString, Argument)])? {
    func n(_ value: Int) -> Argument { .number(UInt64(clamping: value)) }
    switch error {
    case .invalidInput(let input):
      switch input {
      case .emptyText: return ("empty-text", [])
      case .textTooLong(let bytes): return ("text-too-long", [("bytes", n(bytes))])
      case .emptySender: return ("empty-sender", [])
      case .senderTooLong(let bytes): return ("sender-too-long", [("bytes", n(bytes))])
      case .emptyStreamName: return ("empty-stream-name", [])
      case .streamNameTooLong(let bytes): return ("stream-name-too-long", [("bytes", n(bytes))])
      case .streamNameHasControl(let name): return ("stream-name-has-control", [("stream", .text(name))])
      case .madeOutOfRange(let made, let time):
        return ("made-out-of-range", [("made", .time(made)), ("time", .time(time))])
      case .nilReplica: return ("nil-replica", [])
      case .malformedSelector, .prefixTooShort, .malformedID, .write, .rebaseWithoutVersion, .remoteLocation, .change:
        return nil
      }
    case .versionConflict(let stream, let expected, let actual):
      return (
        "version-conflict", [("stream", .stream(stream)), ("expected", .number(expected)), ("actual", .number(actual))]
      )
    case .insertOutOfRange(let stream, let index, let count):
      return ("insert-out-of-range", [("stream", .stream(stream)), ("index", n(index)), ("count", n(count))])
    case .moveOutOfRange(let stream, let end, let index, let count):
      return (
        "move-out-of-range",
        [("stream", .stream(stream)), ("end", .text(end.rawValue)), ("index", n(index)), ("count", n(count))]
      )
    case .emptyStream(let stream): return ("empty-stream", [("stream", .stream(stream))])
    case .idAlreadyUsed(let id, let seq), .idUsedInAnotherStream(let id, let seq, _):
      return ("id-already-used", [("id", .id(id)), ("seq", .number(seq))])
    case .itemMismatch(let index, let found, let expected):
      return ("item-mismatch", [("index", n(index)), ("found", .id(found)), ("expected", .id(expected))])
    case .noSuchItem(let id, let stream): return ("no-such-item", [("id", .id(id)), ("stream", .stream(stream))])
    case .itemRemoved(let id, let seq): return ("item-removed", [("id", .id(id)), ("seq", .number(seq))])
    case .itemErased(let id, let seq): return ("item-erased", [("id", .id(id)), ("seq", .number(seq))])
    case .itemInAnotherStream(let id, let home, let stream):
      return ("item-in-another-stream", [("id", .id(id)), ("home", .stream(home)), ("stream", .stream(stream))])
    case .seqBeyondHead(let seq, let head):
      return ("seq-beyond-head", [("seq", .number(seq)), ("head", .number(head))])
    case .historyTrimmed(let horizon): return ("history-trimmed", [("horizon", .number(horizon))])
    case .itemIsLive(let id, let stream): return ("item-is-live", [("id", .id(id)), ("stream", .stream(stream))])
    case .nothingToUndo(let stream): return ("nothing-to-undo", [("stream", .stream(stream))])
    case .alreadyUndone(let seq, let by): return ("already-undone", [("seq", .number(seq)), ("by", .number(by))])
    case .undoneEventNotInLog(let seq): return ("undone-event-not-in-log", [("seq", .number(seq))])
    case .noSuchEvent(let seq, let head): return ("no-such-event", [("seq", .number(seq)), ("head", .number(head))])
    case .eventInAnotherStream(let seq, let home, let stream):
      return ("event-in-another-stream", [("seq", .number(seq)), ("home", .stream(home)), ("stream", .stream(stream))])
    case .eventNotInStream(let seq, let stream):
      return ("event-not-in-stream", [("seq", .number(seq)), ("stream", .stream(stream))])
    case .changeAppendedNothing(let change): return ("change-appended-nothing", [("change", .number(change))])
    case .changeOutOfOrder(let change, let done):
      return ("change-out-of-order", [("change", .number(change)), ("done", .number(done))])
    case .namedToken(.mayNot(let token, let right, let stream)):
      return (
        "token-may-not", [("token", .text(token)), ("right", .text(right.rawValue)), ("stream", .stream(stream))]
      )
    // What only a command or an import line can be refused for (an id
    // prefix, a rebase, an imported undo), and every failure of the store,
    // the log or a sync: no change is refused for these. Listed, not
    // defaulted, so that a new error is given a code or left out here on
    // purpose.
    case .noPrefixMatch, .noRemovedPrefixMatch, .ambiguousPrefix, .outOfRangeAtVersion, .notAnUndo, .line,
      .cannotReadInput, .corruptedRecord, .corruptedLog, .eventDoesNotFit, .derivedDamage, .outdatedFormat,
      .unrepairable, .noDatabase, .notAMsglogDatabase, .anotherProgramsDatabase, .readOnly, .permissionDenied,
      .cannotRead, .cannotCreate, .cannotBackUp, .backupNotSupported, .diskFull, .changedDuringRead, .purgeHeldByReader,
      .purgeHeldByTransaction, .purgeHeldByLock, .purgeNeedsOwner, .purgeLeftStatistics,
      .purgeNotSupported, .trimNotSupported, .forgettingInReplica, .cannotConnect, .connectionLost, .readCancelled,
      .newerFormat, .storeFailure, .lmdbFailure, .systemRefused, .cannotFollow, .followedDatabaseDisplaced,
      .writtenDatabaseDisplaced,
      .rebuildDidNotVerify,
      .foreignFailure, .notAReplica, .anotherLog, .incompatibleRemote, .remoteLostTrack, .syncRunning,
      .replicaMovedDuringPull,
      .changeDoesNotApply, .cannotClone, .replicaSecretRefused, .changeForgotten, .changeNumberReused,
      .unacceptableRecord, .remoteFault,
      .tokenRefused, .remoteForbids, .pushRefused, .untrustedRemote, .syncTimedOut, .missingTables, .namedToken:
      return nil
    }
  }

  /// The error a code names, read from its data; nil for a code this
  /// msglog does not know. Throws when the data does not fit the code.
  static func error(code: String, _ a: inout Arguments) throws(Arguments.Mismatch) -> MsglogError? {
    switch code {
    case "empty-text": return .invalidInput(.emptyText)
    case "text-too-long": return .invalidInput(.textTooLong(bytes: try a.int("bytes")))
    case "empty-sender": return .invalidInput(.emptySender)
    case "sender-too-long": return .invalidInput(.senderTooLong(bytes: try a.int("bytes")))
    case "empty-stream-name": return .invalidInput(.emptyStreamName)
    case "stream-name-too-long": return .invalidInput(.streamNameTooLong(bytes: try a.int("bytes")))
    case "stream-name-has-control": return .invalidInput(.streamNameHasControl(try a.text("stream")))
    case "made-out-of-range": return .invalidInput(.madeOutOfRange(made: try a.time("made"), time: try a.time("time")))
    case "nil-replica": return .invalidInput(.nilReplica)
    case "version-conflict":
      return .versionConflict(
        stream: try a.stream("stream"), expected: try a.number("expected"), actual: try a.number("actual"))
    case "insert-out-of-range":
      return .insertOutOfRange(stream: try a.stream("stream"), index: try a.int("index"), count: try a.int("count"))
    case "move-out-of-range":
      guard let end = MsglogError.MoveEnd(rawValue: try a.text("end")) else { throw Arguments.Mismatch() }
      return .moveOutOfRange(
        stream: try a.stream("stream"), end: end, index: try a.int("index"), count: try a.int("count"))
    case "empty-stream": return .emptyStream(try a.stream("stream"))
    case "id-already-used": return .idAlreadyUsed(try a.id("id"), insertSeq: try a.number("seq"))
    case "item-mismatch":
      return .itemMismatch(index: try a.int("index"), found: try a.id("found"), expected: try a.id("expected"))
    case "no-such-item": return .noSuchItem(try a.id("id"), stream: try a.stream("stream"))
    case "item-removed": return .itemRemoved(try a.id("id"), removeSeq: try a.number("seq"))
    case "item-erased": return .itemErased(try a.id("id"), eraseSeq: try a.number("seq"))
    case "item-in-another-stream":
      return .itemInAnotherStream(try a.id("id"), home: try a.stream("home"), stream: try a.stream("stream"))
    case "seq-beyond-head": return .seqBeyondHead(seq: try a.number("seq"), head: try a.number("head"))
    case "history-trimmed": return .historyTrimmed(horizon: try a.number("horizon"))
    case "item-is-live": return .itemIsLive(try a.id("id"), stream: try a.stream("stream"))
    case "nothing-to-undo": return .nothingToUndo(stream: try a.stream("stream"))
    case "already-undone": return .alreadyUndone(seq: try a.number("seq"), by: try a.number("by"))
    case "undone-event-not-in-log": return .undoneEventNotInLog(seq: try a.number("seq"))
    case "no-such-event": return .noSuchEvent(seq: try a.number("seq"), head: try a.number("head"))
    case "event-in-another-stream":
      return .eventInAnotherStream(seq: try a.number("seq"), home: try a.stream("home"), stream: try a.stream("stream"))
    case "event-not-in-stream": return .eventNotInStream(seq: try a.number("seq"), stream: try a.stream("stream"))
    case "change-appended-nothing": return .changeAppendedNothing(change: try a.number("change"))
    case "change-out-of-order": return .changeOutOfOrder(change: try a.number("change"), done: try a.number("done"))
    case "token-may-not":
      guard let right = TokenScopes.Right(rawValue: try a.text("right")) else { throw Arguments.Mismatch() }
      return .namedToken(.mayNot(token: try a.text("token"), right: right, stream: try a.stream("stream")))
    default: return nil
    }
  }

  /// A reason's data, read member by member; `allRead` says whether every
  /// member but the code was (a member this msglog does not read means
  /// data it cannot tell: the reason is then an unknown one).
  package struct Arguments {
    struct Mismatch: Error {}

    private var members: [String: JSONValue] = [:]
    private var read: Set<String> = ["code"]

    init(_ pairs: [(String, JSONValue)]) {
      for (key, value) in pairs { members[key] = value }
    }

    var allRead: Bool { members.keys.allSatisfy(read.contains) }

    mutating func text(_ name: String) throws(Mismatch) -> String {
      read.insert(name)
      guard case .string(let text)? = members[name] else { throw Mismatch() }
      return text
    }

    mutating func number(_ name: String) throws(Mismatch) -> UInt64 {
      read.insert(name)
      guard case .number(let text)? = members[name], let value = Limits.parseNumber(text) else { throw Mismatch() }
      return value
    }

    mutating func int(_ name: String) throws(Mismatch) -> Int { Int(try number(name)) }

    mutating func id(_ name: String) throws(Mismatch) -> ItemID {
      guard let id = ItemID(canonical: try text(name)) else { throw Mismatch() }
      return id
    }

    mutating func stream(_ name: String) throws(Mismatch) -> StreamName { StreamName(try text(name)) }

    mutating func time(_ name: String) throws(Mismatch) -> Timestamp {
      guard let time = Timestamp(rfc3339: try text(name)) else { throw Mismatch() }
      return time
    }
  }
}
