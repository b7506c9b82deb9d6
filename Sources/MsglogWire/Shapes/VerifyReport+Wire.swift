import Msglog

extension JSONWriter {
  /// `verify --json`.
  ///
  ///     {"ok":false,"events":42,"streams":2,"items":17,"problems":["…"]}
  package mutating func verifyReport(_ report: VerifyReport) {
    beginObject()
    member("ok", report.isClean)
    member("events", report.events)
    member("streams", report.streams)
    member("items", report.liveItems)
    key("problems")
    beginArray()
    for problem in report.problems { value(problem) }
    endArray()
    endObject()
  }
}
