import Msglog

extension JSONWriter {
  /// `import --json`: `{"imported":259778,"seq":259778}`.
  package mutating func importResult(_ result: ImportResult) {
    beginObject()
    member("imported", result.imported)
    member("seq", result.head)
    endObject()
  }
}
