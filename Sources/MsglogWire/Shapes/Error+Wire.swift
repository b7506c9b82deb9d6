import Msglog

extension JSONWriter {
  /// The server's error body: `{"error":"MESSAGE"}`.
  package mutating func error(_ message: String) {
    beginObject()
    member("error", message)
    endObject()
  }
}
