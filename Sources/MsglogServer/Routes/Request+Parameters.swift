import Msglog

extension Request {
  /// `stream`, else `main`.
  func stream() throws(MsglogError) -> StreamName {
    guard let name = query["stream"] else { return .main }
    return try StreamName(validating: name)
  }

  /// `stream`, else none (every stream).
  func onlyStream() throws(MsglogError) -> StreamName? {
    try query["stream"].map { name throws(MsglogError) in try StreamName(validating: name) }
  }

  /// A whole number from 0 to 2^63-1, as the command line takes it.
  func number(_ name: String) throws(HTTPError) -> UInt64? {
    guard let text = query[name] else { return nil }
    return try Self.number(text, what: name)
  }

  static func number(_ text: String, what: String) throws(HTTPError) -> UInt64 {
    guard let value = Limits.parseNumber(text) else {
      throw .badRequest(
        "invalid \(what) \(TerminalText.quoted(text)): expected a decimal integer from 0 to 2^63-1")
    }
    return value
  }
}
