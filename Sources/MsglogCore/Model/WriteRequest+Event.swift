extension WriteRequest {
  /// The request that, performed on the log as it was just before `event`,
  /// appends that very event again: its id, indices, time, `undoes` and
  /// origin. What a rebuild of the derived tables runs, and what a replica
  /// runs to take in an event of its remote (checking that it gets the
  /// same event, so its copy is exact).
  package init(recreating event: Event) throws(MsglogError) {
    let seq = event.seq
    /// A recorded index as a position; past 2^63-1 no msglog wrote it.
    func position(_ index: UInt64) throws(MsglogError) -> Int {
      guard let position = Int(exactly: index) else {
        throw .eventDoesNotFit(seq: seq, reason: "index \(index) is beyond any stream")
      }
      return position
    }
    let command: Command
    switch event.op {
    case .insert(let id, let index, let text, let sender):
      command = .insert(InsertRequest(index: try position(index), text: text, sender: sender, id: id))
    case .remove(let id, _):
      command = .remove(.id(id))
    case .move(let id, let from, let to):
      command = .move(from: try position(from), to: try position(to), id: id)
    case .edit(let id, let text, let sender, _, _, _):
      command = .edit(.id(id), text: text, sender: sender)
    case .restore(let id, let index, _):
      command = .restore(.id(id), index: try position(index))
    case .erase(let id, _):
      command = .erase(.id(id))
    case .unsign(let id, let edit):
      command = .unsign(.id(id), edit: edit)
    }
    self.init(
      stream: event.stream, command: command, time: event.time, undoes: event.undoes, origin: event.origin,
      erased: event.erased)
  }
}
