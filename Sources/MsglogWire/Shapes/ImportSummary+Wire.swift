import Msglog

extension JSONWriter {
  /// `import --json`: `{"imported":259778,"seq":259778}`.
  package mutating func importSummary(_ summary: ImportSummary) {
    beginObject()
    member("imported", summary.imported)
    member("seq", summary.head)
    endObject()
  }
}
