import Msglog

extension JSONWriter {
  /// `backup --json`: the copy's event count, the seq it holds (its head),
  /// where it is, its data file's size and whether it was compacted.
  ///
  ///     {"events":1000,"seq":1000,"path":"board-copy.lmdb","bytes":1052672,"compact":false}
  package mutating func backupReport(_ report: EventLog.BackupReport, path: String, compact: Bool) {
    beginObject()
    member("events", report.events)
    member("seq", report.seq)
    member("path", path)
    member("bytes", report.bytes)
    member("compact", compact)
    endObject()
  }
}
