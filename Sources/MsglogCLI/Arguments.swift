import MsglogCore

/// What the command line itself says went wrong, with its exit code: a
/// mistake in the arguments (64), or a command that ran and did not succeed (1).
package struct CommandLineError: Error, Equatable, Sendable {
  package var message: String
  var hint: String?
  var exitCode: Int32

  /// A mistake on the command line (exit 64).
  package static func usage(_ message: String, hint: String? = nil) -> CommandLineError {
    CommandLineError(message: message, hint: hint, exitCode: 64)
  }

  /// A command that ran but did not succeed (exit 1).
  package static func failed(_ message: String, hint: String? = nil) -> CommandLineError {
    CommandLineError(message: message, hint: hint, exitCode: 1)
  }
}

/// The command line, split into options and positional arguments.
///
/// Options may stand anywhere; `--` ends them; every value option also takes
/// the `--name=value` form. Which options take a value comes from the
/// declaration table; whether an option belongs to the command is checked
/// once the command is known (`check`), so that `msglog --sender ann append
/// hi` and `msglog append hi --sender ann` mean the same.
package struct Arguments: Equatable {
  var positionals: [String] = []
  /// Option name (without dashes) → value; flags map to "". A repeatable
  /// option maps to its first value here and to all of them in `repeated`.
  var options: [String: String] = [:]
  var repeated: [String: [String]] = [:]
  /// Options in the order given, for error messages.
  var order: [String] = []

  /// Every declared option by its long name.
  static let declared: [String: OptionDeclaration] = Dictionary(
    uniqueKeysWithValues: Options.every.map { ($0.name, $0) })
  /// Long names by one-letter alias.
  static let shortNames: [Character: String] = Dictionary(
    uniqueKeysWithValues: Options.every.compactMap { option in option.short.map { ($0, option.name) } })

  init(parsing tokens: [String]) throws(CommandLineError) {
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
      let name: String
      var inlineValue: String? = nil
      if token.hasPrefix("--") {
        let body = token.dropFirst(2)
        if let eq = body.firstIndex(of: "=") {
          name = String(body[..<eq])
          inlineValue = String(body[body.index(after: eq)...])
        } else {
          name = String(body)
        }
      } else if token.count == 2, let long = Arguments.shortNames[token.last!] {
        name = long
      } else {
        throw CommandLineError.usage("unknown option \(TerminalText.quoted(token))", hint: "see 'msglog --help'")
      }
      guard let option = Arguments.declared[name] else {
        throw CommandLineError.usage(
          "unknown option \(TerminalText.quoted("--" + name))",
          hint: Suggestion.hint(for: name, among: Arguments.optionNames(offeredWith: tokens), prefix: "--")
            ?? "see 'msglog --help'")
      }
      if option.isFlag {
        guard inlineValue == nil else { throw CommandLineError.usage("option --\(name) takes no value") }
        try set(name, "")
      } else if let inlineValue {
        try set(name, inlineValue)
      } else {
        guard i < tokens.count else { throw CommandLineError.usage("option --\(name) needs a value") }
        // `--sender --json hi`: the next word is an option, not a value.
        let next = tokens[i]
        if next == "--" || Arguments.isKnownOption(next) {
          throw CommandLineError.usage(
            "option --\(name) needs a value, but \(TerminalText.quoted(next)) is an option",
            hint: "to give it as the value, write --\(name)=\(next)")
        }
        try set(name, next)
        i += 1
      }
    }
  }

  /// Whether `token` names one of msglog's options (`--json`, `--at=3`, `-h`).
  static func isKnownOption(_ token: String) -> Bool {
    if token.count == 2, token.hasPrefix("-"), shortNames[token.last!] != nil { return true }
    guard token.hasPrefix("--") else { return false }
    return declared[String(token.dropFirst(2).prefix { $0 != "=" })] != nil
  }

  /// A dash-led token is an option, except `-` alone (stdin) and a negative
  /// number, which is an argument so that its error says what is wrong with it.
  static func looksLikeOption(_ token: String) -> Bool {
    let utf8 = Array(token.utf8)
    guard utf8.count >= 2, utf8[0] == UInt8(ascii: "-") else { return false }
    return !(utf8[1] >= 0x30 && utf8[1] <= 0x39)
  }

  private mutating func set(_ name: String, _ value: String) throws(CommandLineError) {
    if Arguments.declared[name]?.repeatable == true {
      repeated[name, default: []].append(value)
      if options[name] == nil { order.append(name) }
      options[name] = options[name] ?? value
      return
    }
    guard options[name] == nil else { throw CommandLineError.usage("option --\(name) is given more than once") }
    options[name] = value
    order.append(name)
  }

  /// Every value of a repeatable option, in the order given.
  func values(_ option: OptionDeclaration) -> [String] { repeated[option.name] ?? [] }

  func has(_ name: String) -> Bool { options[name] != nil }
  func has(_ option: OptionDeclaration) -> Bool { options[option.name] != nil }
  subscript(_ option: OptionDeclaration) -> String? { options[option.name] }

  /// A decimal option value in 0…2^63-1.
  func number(_ option: OptionDeclaration) throws(CommandLineError) -> UInt64? {
    guard let text = options[option.name] else { return nil }
    return try Arguments.number(text, what: "--\(option.name)")
  }

  package static func number(_ text: String, what: String) throws(CommandLineError) -> UInt64 {
    guard let n = Limits.parseNumber(text) else {
      throw CommandLineError.usage(
        "invalid \(what) \(TerminalText.quoted(text)): expected a decimal integer from 0 to 2^63-1")
    }
    return n
  }

  /// The options a "did you mean" may offer: those of the command a word of
  /// `tokens` names (`list --frm` is not offered `--from`, which `list`
  /// would refuse next), else every one.
  static func optionNames(offeredWith tokens: [String]) -> [String] {
    let named = tokens.lazy.compactMap { word in CommandDeclaration.ordered.first { $0.name.rawValue == word } }.first
    guard let command = named else { return declared.keys.sorted() }
    return Set((command.allOptions + command.tolerated).map(\.name)).sorted()
  }

  /// Refuses options that do not belong to `command` and a wrong number of arguments.
  func check(against command: CommandDeclaration, positionals: [String]) throws(CommandLineError) {
    let accepted = Set((command.allOptions + command.tolerated).map(\.name))
    for option in order where !accepted.contains(option) {
      throw CommandLineError.usage(
        "option --\(option) does not apply to '\(command.name.rawValue)'",
        hint: "see 'msglog help \(command.name.rawValue)'")
    }
    let required = command.arguments.filter { !$0.optional }
    if positionals.count < required.count {
      throw CommandLineError.usage(
        "'\(command.name.rawValue)' needs \(command.arguments[positionals.count].name)", hint: "usage: \(command.usage)"
      )
    }
    let repeating = command.arguments.last?.repeating == true
    if !repeating, positionals.count > command.arguments.count {
      throw CommandLineError.usage(
        "unexpected argument \(TerminalText.quoted(positionals[command.arguments.count])) for '\(command.name.rawValue)'",
        hint: "usage: \(command.usage)")
    }
  }
}
