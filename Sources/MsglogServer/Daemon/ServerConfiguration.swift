/// How the server runs: where it listens and who it lets in.
package struct ServerConfiguration: Sendable {
  package var listen: ListenAddress
  /// The bearer token every API request must carry, when one is set.
  package var token: String?

  /// A request body over this is refused with 413 (a message is at most
  /// 1 MiB of text; escaping and the other members fit in the rest).
  package static let bodyLimit = 1 << 20 + 64 * 1024

  package init(listen: ListenAddress, token: String? = nil) throws(ServerError) {
    self.listen = listen
    self.token = token
    if let token, token.utf8.count < 16 {
      throw .usage("the token is too short (at least 16 characters)", hint: "e.g. MSGLOG_TOKEN=$(openssl rand -hex 16)")
    }
    if !listen.isLoopback && token == nil {
      throw .usage(
        "listening on \(listen.text) lets other machines in, so it needs a token",
        hint: "set MSGLOG_TOKEN (or --token); clients send 'Authorization: Bearer TOKEN'")
    }
  }
}
