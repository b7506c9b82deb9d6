/// `verify`'s check of erased events (docs/REFERENCE.md, "Forgetting on
/// purpose"): every erased insert or edit names an erase event, later in
/// the log, of the same item, and the record holds no text or sender; an
/// edit whose sender alone was taken off names the unsign event of it and
/// names no sender; every unsign names an edit it left so. In a replica, a
/// record may name an erase or unsign past the log's head: its pull takes
/// in the remote's records as they are, blanked ones too, and one cut
/// before the page that holds the erase leaves them so until the next
/// pull brings that very erase. (A log of its own could never take it in
/// at that seq: there it is damage.)
extension Verifier.Check {
  mutating func checkErasure(_ event: Event) {
    if case .unsign(let id, let edit) = event.op { return checkUnsign(event, of: id, edit: edit) }
    guard let erase = event.erased else { return }
    let text: String
    let sender: String?
    switch event.op {
    case .insert(_, _, let inserted, let named):
      (text, sender) = (inserted, named)
    case .edit(_, let edited, let named, _, _, _):
      (text, sender) = (edited, named)
    case .remove, .move, .restore, .erase, .unsign:
      problem("seq \(event.seq): \(event.opName) marked erased")
      return
    }
    let named: Event?
    do { named = try reader.event(at: erase) } catch {
      problem("seq \(event.seq): erased at seq \(erase), which cannot be read: \(error)")
      return
    }
    if named == nil, erase > event.seq, let head = try? reader.headSeq(), erase > head, isReplica {
      if sender != nil {
        problem("seq \(event.seq): erased at seq \(erase), past the head, but it still names a sender")
      }
      return
    }
    guard let named, erase > event.seq, named.stream == event.stream else {
      problem("seq \(event.seq): erased at seq \(erase), which is not an erase of \(event.id.text)")
      report.logIsIntact = false
      return
    }
    switch named.op {
    case .erase(let id, _) where id == event.id:
      if !text.isEmpty || sender != nil { problem("seq \(event.seq): erased, but it still holds a text or a sender") }
    case .unsign(let id, let edit) where id == event.id && edit == event.seq:
      if sender != nil { problem("seq \(event.seq): unsigned, but it still names a sender") }
      if text.isEmpty { problem("seq \(event.seq): unsigned, but its text is gone (only an erase blanks it)") }
    default:
      problem("seq \(event.seq): erased at seq \(erase), which is not an erase of \(event.id.text)")
      report.logIsIntact = false
    }
  }

  /// An unsign names an earlier edit of its item in its stream, which says
  /// it was unsigned by it (or erased since, with its item).
  private mutating func checkUnsign(_ event: Event, of id: ItemID, edit: UInt64) {
    let target: Event?
    do { target = try reader.event(at: edit) } catch {
      problem("seq \(event.seq): unsigns seq \(edit), which cannot be read: \(error)")
      return
    }
    // Below a trim's horizon the edit may be gone with its history.
    guard let target else { return }
    guard case .edit = target.op, target.id == id, target.stream == event.stream, edit < event.seq else {
      problem("seq \(event.seq): unsigns seq \(edit), which is not an earlier edit of \(id.text)")
      report.logIsIntact = false
      return
    }
    // Unsigned by this one, or blanked since by an erase of its item: no
    // other unsign of it (one edit, one unsign).
    guard let erased = target.erased, erased == event.seq || (erased > event.seq && isErase(at: erased, of: id)) else {
      problem("seq \(event.seq): unsigns seq \(edit), which does not say so")
      return
    }
  }

  /// Whether the log is a replica's, whose pull takes a remote's records
  /// as they are (and may be cut between them).
  private var isReplica: Bool {
    ((try? (reader as? any ReplicaStateReader)?.replicaState()) ?? nil) != nil
  }

  /// Whether the event at `seq` is an erase of the item `id`.
  private func isErase(at seq: UInt64, of id: ItemID) -> Bool {
    guard case .erase(let erased, _)? = (try? reader.event(at: seq))??.op else { return false }
    return erased == id
  }
}
