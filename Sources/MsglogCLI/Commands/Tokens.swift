import Msglog
import MsglogWire

/// `token add|list|revoke` (Declaration+Tokens.swift).
extension Invocation {
  func token() throws {
    guard let action = CommandDeclaration.TokenAction(rawValue: operands[0]) else {
      throw CommandLineError.usage(
        "unknown token action \(TerminalText.quoted(operands[0])): expected add, list or revoke",
        hint: "usage: \(CommandDeclaration.tokenCommand.usage)")
    }
    let scopeOptions = [Options.read, Options.write, Options.erase, Options.expires]
    if action != .add, let given = scopeOptions.first(where: args.has) {
      throw CommandLineError.usage("option --\(given.name) applies only to 'token add'")
    }
    switch action {
    case .add: try addToken()
    case .list:
      guard operands.count == 1 else {
        throw CommandLineError.usage("'token list' takes no NAME", hint: "'msglog token list' lists them all")
      }
      try listTokens()
    case .revoke: try revokeToken()
    }
  }

  private func name(for action: CommandDeclaration.TokenAction) throws -> String {
    guard operands.count == 2 else {
      throw CommandLineError.usage(
        "'token \(action.rawValue)' needs \(action == .add ? "NAME" : "NAME or ID")",
        hint: "usage: \(CommandDeclaration.tokenCommand.usage)")
    }
    return operands[1]
  }

  /// Prints the token alone on stdout (`TOKEN=$(msglog token add ann …)`),
  /// and on stderr that it is shown once.
  private func addToken() throws {
    let name = try name(for: .add)
    // Everything is checked before the database is opened: a usage error changes nothing.
    try NamedToken.validate(name: name)
    let scopes = TokenScopes(
      read: try args.values(Options.read).map(StreamPattern.init(validating:)),
      write: try args.values(Options.write).map(StreamPattern.init(validating:)),
      erase: try args.values(Options.erase).map(StreamPattern.init(validating:)))
    let lifetime = try args[Options.expires].map(TokenLifetime.init(validating:))
    let log = try openLog(forWriting: true)
    // Shown as soon as it is made, before the first token's wait (see
    // `addToken`): a stop during the wait leaves no token unshown.
    _ = try log.addToken(named: name, scopes: scopes, lifetime: lifetime) { added in
      do {
        if json {
          try stdout.document { json in
            json.beginObject()
            json.member("name", added.token.name)
            json.member("id", added.token.id)
            json.member("token", added.secret.token)
            json.endObject()
          }
        } else {
          try stdout.line(added.secret.token)
        }
        try stdout.flush()
      } catch OutputError.failed(let errno) {
        let revoked = (try? log.revokeToken(added.token.id)) != nil
        throw SecretNotShown(name: name, id: added.token.id, errno: errno, revoked: revoked)
      }
      stderr.note(
        "made token \(name) (id \(added.token.id))\(scopes.isEmpty ? ", which may do nothing" : ""): "
          + "it is shown this once; give it to \(name) only")
      try? stderr.flush()
    }
  }

  private func listTokens() throws {
    let tokens = try openLog(forWriting: false).tokens()
    if json {
      return try stdout.document { json in
        json.beginObject()
        json.key("tokens")
        json.array { json in for token in tokens { json.namedToken(token) } }
        json.endObject()
      }
    }
    let now = Timestamp.now()
    for token in tokens {
      try stdout.line(Self.line(for: token, now: now))
    }
  }

  /// `ann 3f2a… read=* write=team/* made … expires … last-used … live`.
  static func line(for token: NamedToken, now: Timestamp) -> String {
    var words = [TerminalText.escape(token.name), token.id]
    for (key, patterns) in [("read", token.scopes.read), ("write", token.scopes.write), ("erase", token.scopes.erase)]
    where !patterns.isEmpty {
      words.append(key + "=" + patterns.map { TerminalText.escape($0.description) }.joined(separator: ","))
    }
    if token.scopes.isEmpty { words.append("nothing") }
    words.append("made=" + token.made.rfc3339)
    words.append("expires=" + (token.expires?.rfc3339 ?? "never"))
    words.append("last-used=" + (token.lastUsed?.rfc3339 ?? "never"))
    switch token.standing(at: now) {
    case .live: words.append("live")
    case .revoked(let time): words.append("revoked=" + time.rfc3339)
    case .expired: words.append("expired")
    }
    return words.joined(separator: " ")
  }

  private func revokeToken() throws {
    let token = try openLog(forWriting: true).revokeToken(try name(for: .revoke))
    if json { return try stdout.document { $0.namedToken(token) } }
    try stdout.line("revoked token \(TerminalText.escape(token.name)) (id \(token.id))")
  }
}
