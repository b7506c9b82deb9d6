import MsglogCore

/// The command line, split into options and positional arguments.
///
/// Options may stand anywhere; `--` ends them; every value option also takes
/// the `--name=value` form. Whether an option belongs to the command is
/// checked afterwards (`CommandSpec.check`), so that `msglog --sender ann
/// append hi` and `msglog append hi --sender ann` mean the same.
struct Arguments: Equatable {
  var positionals: [String] = []
  /// Option name (without dashes) → value; flags map to "".
  var options: [String: String] = [:]
  /// Options in the order given, for error messages.
  var order: [String] = []

  /// Options that take a value.
  static let valueOptions: Set<String> = [
    "db", "stream", "sender", "id", "expect-version", "at", "from", "limit",
  ]
  /// Options that are on or off.
  static let flagOptions: Set<String> = ["json", "lines", "all", "help", "version", "repair"]

  init(parsing tokens: [String]) throws(MsglogError) {
    var i = 0
    var optionsEnded = false
    while i < tokens.count {
      let token = tokens[i]
      i += 1
      if optionsEnded || !Arguments.looksLikeOption(token) {
        positionals.append(token)
        continue
      }
      if token == "--" {
        optionsEnded = true
        continue
      }
      if token == "-h" {
        try set("help", "")
        continue
      }
      guard token.hasPrefix("--") else {
        throw .usage("unknown option \(TerminalText.quoted(token))", hint: "see 'msglog --help'")
      }
      let body = token.dropFirst(2)
      let name: String
      var inlineValue: String? = nil
      if let eq = body.firstIndex(of: "=") {
        name = String(body[..<eq])
        inlineValue = String(body[body.index(after: eq)...])
      } else {
        name = String(body)
      }
      if Arguments.valueOptions.contains(name) {
        if let inlineValue {
          try set(name, inlineValue)
        } else {
          guard i < tokens.count else { throw .usage("option --\(name) needs a value") }
          // `--sender --json hi`: the next word is an option, not a value.
          let next = tokens[i]
          if next == "--" || Arguments.isKnownOption(next) {
            throw .usage(
              "option --\(name) needs a value, but \(TerminalText.quoted(next)) is an option",
              hint: "to give it as the value, write --\(name)=\(next)")
          }
          try set(name, next)
          i += 1
        }
      } else if Arguments.flagOptions.contains(name) {
        guard inlineValue == nil else { throw .usage("option --\(name) takes no value") }
        try set(name, "")
      } else {
        throw .usage(
          "unknown option \(TerminalText.quoted("--" + name))", hint: "see 'msglog --help'")
      }
    }
  }

  /// Whether `token` names one of msglog's options (`--json`, `--at=3`, `-h`).
  static func isKnownOption(_ token: String) -> Bool {
    if token == "-h" { return true }
    guard token.hasPrefix("--") else { return false }
    let name = token.dropFirst(2).prefix { $0 != "=" }
    return valueOptions.contains(String(name)) || flagOptions.contains(String(name))
  }

  /// A dash-led token is an option, except `-` alone (stdin) and a negative
  /// number, which is an argument so that its error says what is wrong with it.
  static func looksLikeOption(_ token: String) -> Bool {
    let utf8 = Array(token.utf8)
    guard utf8.count >= 2, utf8[0] == UInt8(ascii: "-") else { return false }
    return !(utf8[1] >= 0x30 && utf8[1] <= 0x39)
  }

  private mutating func set(_ name: String, _ value: String) throws(MsglogError) {
    guard options[name] == nil else { throw .usage("option --\(name) is given more than once") }
    options[name] = value
    order.append(name)
  }

  func has(_ name: String) -> Bool { options[name] != nil }

  /// A decimal option value in 0…2^63-1.
  func number(_ name: String) throws(MsglogError) -> UInt64? {
    guard let text = options[name] else { return nil }
    return try Arguments.number(text, what: "--\(name)")
  }

  static func number(_ text: String, what: String) throws(MsglogError) -> UInt64 {
    guard let n = Limits.parseNumber(text) else {
      throw .usage(
        "invalid \(what) \(TerminalText.quoted(text)): expected a decimal integer from 0 to 2^63-1")
    }
    return n
  }
}
