import MsglogCore

/// NUL-separated words as a command line: parsing and checking against the
/// command table never crash, and every refusal is a usage error (exit 64).
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
    if let name = args.positionals.first, let spec = CommandSpec.named(name) {
      try spec.check(args, positionals: Array(args.positionals.dropFirst()))
      for option in ["expect-version", "at", "from", "limit"] { _ = try args.number(option) }
      _ = spec.help
    }
  } catch {
    precondition(error.kind == .usage, "argument errors are usage errors")
  }
  return 0
}
