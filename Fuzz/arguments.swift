import MsglogCore

/// NUL-separated words as a command line: parsing and checking against the
/// declaration table never crash, every refusal is a usage error (exit 64),
/// and every command's help page can be made.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  var words: [String] = []
  for word in bytes.split(separator: 0, omittingEmptySubsequences: false) {
    // argv is checked for UTF-8 before parsing; mirror that.
    guard let text = String(validating: word, as: UTF8.self) else { return 0 }
    words.append(text)
  }
  do {
    let args = try Arguments(parsing: words)
    if let name = args.positionals.first, let command = CommandDeclaration.named(name) {
      try args.check(against: command, positionals: Array(args.positionals.dropFirst()))
      for option in CommandDeclaration.everyOption where !option.isFlag && option.value == "N" || option.value == "SEQ" {
        _ = try args.number(option)
      }
      _ = Help.page(command)
    }
  } catch {
    // Typed throws: every error the parser can raise is a usage error.
    precondition(error.exitCode == 64)
    _ = error.message
  }
  return 0
}
