import Msglog

/// `help` and `completions`.
extension Invocation {
  /// `help [COMMAND]`.
  func help() throws {
    if args.has(Options.man) {
      guard operands.isEmpty else { throw CommandLineError.usage("--man prints the whole manual; it takes no COMMAND") }
      return try stdout.write(Manual.page)
    }
    guard let name = operands.first else { return try stdout.write(Help.overview) }
    guard let command = CommandDeclaration.named(name) else {
      throw CommandLineError.usage(
        "no help for unknown command \(TerminalText.quoted(name))", hint: CommandName.suggestion(for: name))
    }
    try stdout.write(Help.page(command))
  }

  /// `completions bash|zsh|fish`, and the stream names the scripts ask for.
  func completions() throws {
    if args.has(Options.listStreams) {
      guard operands.isEmpty else { throw CommandLineError.usage("--list-streams takes no SHELL") }
      // Completion must never print an error into the user's prompt.
      guard let streams = try? read({ try $0.streams() }) else { return }
      // A name a terminal would act on (a control, a bidirectional
      // override) is left out: the shell would print it raw in its menu,
      // and it cannot be typed to complete anyway.
      for summary in streams where summary.stream.bytes.withUnsafeBufferPointer(TerminalText.isPlain) {
        try stdout.line(summary.stream.text)
      }
      return
    }
    guard let shell = operands.first else {
      throw CommandLineError.usage(
        "'completions' needs SHELL", hint: "usage: \(CommandDeclaration.declaration(.completions).usage)")
    }
    switch shell {
    case "bash": try stdout.write(Completions.bash)
    case "zsh": try stdout.write(Completions.zsh)
    case "fish": try stdout.write(Completions.fish)
    default:
      throw CommandLineError.usage("unknown shell \(TerminalText.quoted(shell)): expected bash, zsh or fish")
    }
  }
}
