import MsglogCore

/// Named tokens over SQL (`PostgresSchema+Tokens`): read where they are,
/// written through the write buffer with the rest of the transaction.
extension PostgresStore.Access: TokenTableWriter {
  package func token(id: String) throws -> NamedToken? {
    let rows = try query(.meta, PostgresSchema.token(id: id))
    guard rows.count > 0 else { return nil }
    return try rows.withBytes(0, 0) { try TokenRows.decode(id: id, $0) }
  }

  package func forEachToken(_ body: (NamedToken) throws -> Bool) throws {
    let rows = try query(.meta, PostgresSchema.allTokens)
    for row in 0..<rows.count {
      let id = rows.text(row, 0) ?? ""
      guard NamedToken.isID(id) else {
        throw DerivedDamage(.tokens, "\(TerminalText.quoted(id)) is not a token id")
      }
      guard try body(try rows.withBytes(row, 1) { try TokenRows.decode(id: id, $0) }) else { return }
    }
  }

  /// Moves the schema to 5 with the row.
  package func putToken(_ token: NamedToken) throws {
    if (store.schemaVersion ?? 0) < PostgresSchema.tokensVersion {
      buffer.upgradeSchema(to: PostgresSchema.tokensVersion)
    }
    buffer.putToken(TokenRows.encode(token), id: token.id)
  }

  package func replicaOwner(_ replica: ItemID) throws -> String? {
    let rows = try query(.meta, PostgresSchema.replicaOwner(replica))
    guard rows.count > 0 else { return nil }
    return try rows.withBytes(0, 0) { try TokenRows.decodeOwner(of: replica, $0) }
  }

  package func putReplicaOwner(_ id: String, of replica: ItemID) throws {
    buffer.putReplicaOwner(TokenRows.encodeOwner(id, of: replica), of: replica)
  }
}
