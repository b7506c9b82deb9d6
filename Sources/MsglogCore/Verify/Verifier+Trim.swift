/// `verify` of a trimmed log (`TrimmedHistory.swift`): the replay starts
/// from each stream's base, which is checked against what it stands on —
/// the records it reads, its stream's event there, its checkpoint.
extension Verifier.Check {
  /// Seeds the replay with the bases; returns the seq the log's records
  /// begin at (1 for a log never trimmed).
  mutating func bases() -> UInt64 {
    let horizon: Horizon
    let bases: [StreamBase]
    do {
      horizon = try reader.horizon()
      bases = try reader.bases()
    } catch {
      failed(error, "\(error)")
      report.logIsIntact = false
      return 1
    }
    guard horizon.isTrimmed else { return 1 }
    state.horizon = horizon.seq
    // The seqs before the horizon are accounted for by it (the counts a
    // trimmed log keeps add them back).
    report.events = horizon.seq - 1
    for base in bases { check(base, below: horizon.seq) }
    // The items the trims retired: their ids stay used (`RetiredItem`).
    do {
      for item in try reader.retiredItems() {
        guard item.insertSeq < item.removeSeq, item.removeSeq < horizon.seq, state.ids[item.id] == nil else {
          problem(
            "the base of stream \(TerminalText.quoted(item.stream)) retires \(item.id.text) "
              + "(inserted at seq \(item.insertSeq), removed at \(item.removeSeq)), which it cannot")
          continue
        }
        state.ids[item.id] = item.entry
      }
    } catch {
      failed(error, "\(error)")
    }
    return horizon.seq
  }

  private mutating func check(_ base: StreamBase, below horizon: UInt64) {
    let name = TerminalText.quoted(base.stream)
    guard base.seq < horizon else {
      problem("the base of stream \(name) is at seq \(base.seq), not before the horizon \(horizon)")
      report.logIsIntact = false
      return
    }
    state.projections[base.stream] = Projection(slots: base.slots, version: base.version)
    state.lastSeqs[base.stream] = base.seq
    do {
      for slot in base.slots {
        guard let text = try reader.event(at: slot.seq), text.id == slot.id else {
          problem("the base of stream \(name): the text record of \(slot.id.text) (seq \(slot.seq)) is missing")
          report.logIsIntact = false
          continue
        }
        switch text.op {
        case .insert: state.ids[slot.id] = IdEntry(insertSeq: slot.seq)
        case .edit(_, _, _, _, _, let inserted):
          guard let insert = try reader.event(at: inserted), insert.id == slot.id, case .insert = insert.op else {
            problem("the base of stream \(name): the insert of \(slot.id.text) (seq \(inserted)) is missing")
            report.logIsIntact = false
            continue
          }
          state.ids[slot.id] = IdEntry(insertSeq: inserted)
        default:
          problem("the base of stream \(name): seq \(slot.seq) is not a text record of \(slot.id.text)")
          report.logIsIntact = false
        }
      }
      // Its checkpoint is derived from it: compared, as the replay compares others.
      if checkpointAt.removeValue(forKey: base.seq) != nil,
        try reader.checkpoint(of: base.stream, atOrBefore: base.seq) != base
      {
        problem("table checkpoints: stream \(name) at seq \(base.seq) differs from its base")
      }
    } catch {
      failed(error, "the base of stream \(name): \(error)")
      report.logIsIntact = false
    }
  }
}
