/// `verify`'s check of erased events (docs/REFERENCE.md, "Forgetting on
/// purpose"): every erased insert or edit names an erase event, later in
/// the log, of the same item; and the record holds no text or sender.
extension Verifier.Check {
  mutating func checkErasure(_ event: Event) {
    guard let erase = event.erased else { return }
    switch event.op {
    case .insert(_, _, let text, let sender), .edit(_, let text, let sender, _, _, _):
      if !text.isEmpty || sender != nil { problem("seq \(event.seq): erased, but it still holds a text or a sender") }
    case .remove, .move, .restore, .erase:
      problem("seq \(event.seq): \(event.opName) marked erased")
    }
    let named: Event?
    do { named = try reader.event(at: erase) } catch {
      problem("seq \(event.seq): erased at seq \(erase), which cannot be read: \(error)")
      return
    }
    guard let named, erase > event.seq, case .erase(let id, _) = named.op, id == event.id,
      named.stream == event.stream
    else {
      problem("seq \(event.seq): erased at seq \(erase), which is not an erase of \(event.id.text)")
      report.logIsIntact = false
      return
    }
  }
}
