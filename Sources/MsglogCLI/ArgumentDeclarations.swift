/// The pieces a command's declaration is made of (`Declaration.swift`):
/// its options, what a shell may complete them with, its positional
/// arguments.

/// An option: a flag, or one that takes a value.
struct OptionDeclaration: Sendable, Equatable {
  /// The long name, without dashes.
  var name: String
  /// A one-letter alias (`-f`, `-h`).
  var short: Character? = nil
  /// The value's placeholder (`NAME`); nil for a flag.
  var value: String? = nil
  var help: String
  /// What a shell may offer as the value.
  var completion: Completion = .none
  /// May be given more than once, each value kept (`--allow-host a --allow-host b`).
  var repeatable = false

  var isFlag: Bool { value == nil }
  /// `--sender NAME`, `-f, --follow`, `--allow-host NAME...`.
  var synopsis: String {
    (short.map { "-\($0), " } ?? "") + "--\(name)" + (value.map { " \($0)" } ?? "") + (repeatable ? "..." : "")
  }
}

/// What a shell may complete an argument or option value with.
enum Completion: Sendable, Equatable {
  case none
  /// The database's stream names (`msglog completions --list-streams`).
  case streams
  case files
  case directories
  case words([String])
}

/// A positional argument.
struct ArgumentDeclaration: Sendable, Equatable {
  var name: String
  var help: String
  var optional = false
  /// Takes every remaining word (`TEXT...`).
  var repeating = false
  var completion: Completion = .none
}
