/// A named token's row, the same on every store: its fields as a JSON
/// object (a table a person may want to read with `psql`), sealed with
/// a CRC-32C over the table, the id and the JSON, as every derived row
/// is (`DerivedRows`), so that damage is caught when it is read.
package enum TokenRows {
  package static func key(_ id: String) -> [UInt8] { Array(id.utf8) }

  /// A replica's owner's key: `r` and the replica's 16 bytes, after every
  /// token's (hex digits sort before `r`).
  package static func ownerKey(_ replica: ItemID) -> [UInt8] { [UInt8(ascii: "r")] + replica.bytes }

  package static func isOwnerKey(_ key: some Collection<UInt8>) -> Bool {
    key.count == 17 && key.first == UInt8(ascii: "r")
  }

  package static func encodeOwner(_ id: String, of replica: ItemID) -> [UInt8] {
    DerivedRows.seal(.tokens, key: ownerKey(replica), Array(id.utf8))
  }

  package static func decodeOwner(of replica: ItemID, _ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> String {
    var reader = try DerivedRows.open(.tokens, key: ownerKey(replica), row, what: "replica \(replica.text)'s owner")
    let id = String(decoding: reader.rest(), as: UTF8.self)
    guard NamedToken.isID(id) else { throw DerivedDamage(.tokens, "replica \(replica.text)'s owner is no token id") }
    return id
  }

  package static func encode(_ token: NamedToken) -> [UInt8] {
    var json = JSONWriter()
    json.object { json in
      json.member("name", token.name)
      json.member("digest", token.digest.hex)
      for right in TokenScopes.Right.allCases {
        json.key(right.staticKey)
        json.array { json in
          for pattern in token.scopes.listed(right) { json.value(pattern.description) }
        }
      }
      json.member("made", token.made)
      if let expires = token.expires { json.member("expires", expires) }
      if let revoked = token.revoked { json.member("revoked", revoked) }
      if let lastUsed = token.lastUsed { json.member("lastUsed", lastUsed) }
    }
    return DerivedRows.seal(.tokens, key: key(token.id), json.take())
  }

  package static func decode(id: String, _ row: UnsafeRawBufferPointer) throws(DerivedDamage) -> NamedToken {
    var reader = try DerivedRows.open(.tokens, key: key(id), row, what: "token \(id)")
    let damage = { (detail: String) in DerivedDamage(.tokens, "token \(id): \(detail)") }
    guard case .object(let members)? = try? JSONParser.parse(reader.rest()) else { throw damage("not a JSON object") }
    var fields: [String: JSONValue] = [:]
    for (name, value) in members { fields[name] = value }
    func text(_ name: String) -> String? {
      if case .string(let text)? = fields[name] { return text }
      return nil
    }
    func time(_ name: String) throws(DerivedDamage) -> Timestamp? {
      guard let value = text(name) else { return nil }
      guard let time = Timestamp(rfc3339: value) else { throw damage("\(name) is no time") }
      return time
    }
    func patterns(_ right: TokenScopes.Right) throws(DerivedDamage) -> [StreamPattern] {
      guard case .array(let values)? = fields[right.key] else { throw damage("no \(right.key) list") }
      var patterns: [StreamPattern] = []
      for value in values {
        guard case .string(let text) = value, let pattern = try? StreamPattern(validating: text) else {
          throw damage("a \(right.key) pattern is malformed")
        }
        patterns.append(pattern)
      }
      return patterns
    }
    guard let name = text("name"), let digestHex = text("digest"), let digestBytes = Hex.bytes(digestHex.utf8),
      let digest = SHA256.Digest(digestBytes), let made = try time("made")
    else { throw damage("a field is missing") }
    return NamedToken(
      id: id, name: name,
      scopes: TokenScopes(read: try patterns(.read), write: try patterns(.write), erase: try patterns(.erase)),
      made: made, expires: try time("expires"), revoked: try time("revoked"), lastUsed: try time("lastUsed"),
      digest: digest)
  }
}

extension TokenScopes.Right {
  /// Its list's key in a row and in `token list --json`.
  package var key: String { rawValue }

  package var staticKey: StaticString {
    switch self {
    case .read: return "read"
    case .write: return "write"
    case .erase: return "erase"
    }
  }
}

extension TokenScopes {
  /// The patterns given for `right` itself (not those of greater rights).
  package func listed(_ right: Right) -> [StreamPattern] {
    switch right {
    case .read: return read
    case .write: return write
    case .erase: return erase
    }
  }
}
