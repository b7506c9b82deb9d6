/// A named token as the log keeps it (SPEC "Who may do what: named
/// tokens"): its id, whose it is, what it may do, and the SHA-256 of its
/// secret, never the token itself.
public struct NamedToken: Equatable, Sendable {
  /// 16 lowercase hex digits, public: `token list` shows it and the token
  /// itself starts with it, so that a token is found by its id and its
  /// secret compared with one hash.
  public var id: String
  /// Who holds it: the sender of what it writes.
  public var name: String
  public var scopes: TokenScopes
  public var made: Timestamp
  public var expires: Timestamp?
  public var revoked: Timestamp?
  /// When a server last let it in (to five minutes: `EventLog.noteUse`).
  public var lastUsed: Timestamp?
  /// The SHA-256 of its secret's bytes.
  package var digest: SHA256.Digest

  package init(
    id: String, name: String, scopes: TokenScopes, made: Timestamp, expires: Timestamp?, revoked: Timestamp?,
    lastUsed: Timestamp?, digest: SHA256.Digest
  ) {
    self.id = id
    self.name = name
    self.scopes = scopes
    self.made = made
    self.expires = expires
    self.revoked = revoked
    self.lastUsed = lastUsed
    self.digest = digest
  }

  /// Where it stands at `time`.
  public enum Standing: Equatable, Sendable {
    case live
    case revoked(Timestamp)
    case expired(Timestamp)
  }

  public func standing(at time: Timestamp) -> Standing {
    if let revoked { return .revoked(revoked) }
    if let expires, expires <= time { return .expired(expires) }
    return .live
  }

  public static func == (a: NamedToken, b: NamedToken) -> Bool {
    a.id == b.id && a.name == b.name && a.scopes == b.scopes && a.made == b.made && a.expires == b.expires
      && a.revoked == b.revoked && a.lastUsed == b.lastUsed && a.digest.bytes == b.digest.bytes
  }

  /// Checks a name as `token add` takes it: 1–64 of `[A-Za-z0-9._-]`, but
  /// not `-` alone, which `serve`'s text log writes for no token.
  public static func validate(name: String) throws(MsglogError) {
    let bytes = Array(name.utf8)
    let allowed = bytes.allSatisfy { byte in
      (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
    guard (1...64).contains(bytes.count), allowed, name != "-" else { throw .namedToken(.malformedName(name)) }
  }

  /// Whether `text` looks like a token's id (16 lowercase hex digits).
  public static func isID(_ text: String) -> Bool {
    text.utf8.count == 16 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
  }
}
