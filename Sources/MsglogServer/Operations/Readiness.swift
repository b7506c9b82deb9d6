import Msglog

/// `/readyz`: whether a read of the store answers within a second
/// (`PatientRead`: a store that hangs costs the probe a second, not a
/// worker), and whether it can be written (not an LMDB data file cut short).
final class Readiness: Sendable {
  enum Verdict: Equatable {
    /// A read answered; `replica` on a PostgreSQL standby.
    case ready(replica: Bool)
    case unavailable(String)
  }

  private let probe: PatientRead<Verdict>
  private let location: String
  /// Where the detail goes: the probe's answer names no database, no
  /// host and no error text (it is served without a token); the operator's
  /// log line does.
  private let warnings: ServerLog
  static let patience: Double = 1

  init(log: EventLog, warnings: ServerLog) {
    self.location = log.location
    self.warnings = warnings
    probe = PatientRead(patience: Self.patience) { _ in Self.read(log, warnings: warnings) }
  }

  func check() -> Verdict {
    switch probe.read() {
    case .answered(let verdict):
      return verdict
    case .unanswered:
      warnings.warn("readyz", "a read of \(location) did not answer within 1 s")
      return .unavailable("a read of the store did not answer within 1 s")
    case .noThread:
      return .unavailable("cannot start a thread to read the store")
    }
  }

  private static func read(_ log: EventLog, warnings: ServerLog) -> Verdict {
    let displaced = Verdict.unavailable("the database was removed or replaced while serving; restart the server")
    // Every write is refused (`Environment.checkLengthBeforeWriting`), and
    // so is every read where opening the tables writes: a balancer should
    // send the traffic elsewhere, and the operator's log names the page lost.
    func cutShort(_ failure: LMDBFailure) -> Verdict {
      warnings.warn("readyz", "\(failure)")
      return .unavailable("the database file is cut short")
    }
    if log.isDisplaced { return displaced }
    do {
      // One snapshot: the file's length first (read with `pread`, where a
      // read through the map of a page past the file's end could fault),
      // then the head.
      let cut = try log.read { snapshot in
        let cut = try snapshot.storeReader.filesCutShort()
        if cut == nil { _ = try snapshot.headSeq() }
        return cut
      }
      if let cut { return cutShort(cut) }
      return log.isDisplaced ? displaced : .ready(replica: try log.isStandby())
    } catch MsglogError.noDatabase {
      // Nothing written yet: the store answered that (the first write creates it).
      return .ready(replica: (try? log.isStandby()) ?? false)
    } catch MsglogError.lmdbFailure(let failure) where failure.isFileCutShort {
      return cutShort(failure)
    } catch {
      warnings.warn("readyz", "the store does not answer: \(error)")
      return .unavailable("the store does not answer")
    }
  }
}
