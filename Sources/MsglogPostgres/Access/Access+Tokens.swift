import MsglogCore

/// Named tokens over SQL (`PostgresSchema+Tokens`): read where they are,
/// written through the write buffer with the rest of the transaction.
extension PostgresStore.Access: TokenTableWriter {
  /// Whether `msglog.tokens` may be read: known to be there (it comes with
  /// the schema's tables at version 3), else asked once.
  private func tokenTableReadable() throws -> Bool {
    if (store.tablesVersion ?? 0) >= 3 || buffer.tablesUpgrade != nil { return true }
    if let known = tokenTableKnown { return known }
    let exists = try query(.meta, PostgresSchema.tokenTableExists).bool(0, 0) == true
    tokenTableKnown = exists
    return exists
  }

  package func token(id: String) throws -> NamedToken? {
    guard try tokenTableReadable() else { return nil }
    let rows = try query(.meta, PostgresSchema.token(id: id))
    guard rows.count > 0 else { return nil }
    return try TokenRows.decode(id: id, rows.bytes(0, 0))
  }

  package func forEachToken(_ body: (NamedToken) throws -> Bool) throws {
    guard try tokenTableReadable() else { return }
    // Tokens are a team's people: a few hundred rows at most, in one answer.
    let rows = try query(.meta, PostgresSchema.allTokens)
    for row in 0..<rows.count {
      let id = rows.text(row, 0) ?? ""
      guard NamedToken.isID(id) else { throw DerivedDamage(.tokens, "\(TerminalText.quoted(id)) is not a token id") }
      guard try body(try TokenRows.decode(id: id, rows.bytes(row, 1))) else { return }
    }
  }

  package func replicaOwner(_ replica: ItemID) throws -> String? {
    guard try tokenTableReadable() else { return nil }
    let rows = try query(.meta, PostgresSchema.replicaOwner(replica))
    guard rows.count > 0 else { return nil }
    return try TokenRows.decodeOwner(of: replica, rows.bytes(0, 0))
  }

  package func putReplicaOwner(_ id: String, of replica: ItemID) throws {
    if (store.tablesVersion ?? PostgresSchema.tablesVersion) < 3 { _ = try bringTablesUp() }
    buffer.putReplicaOwner(TokenRows.encodeOwner(id, of: replica), of: replica)
  }

  /// Makes the table first when the database's tables are older (its
  /// schema's owner only: another role is told which table is missing),
  /// and moves the schema to 5 with the row.
  package func putToken(_ token: NamedToken) throws {
    if (store.tablesVersion ?? PostgresSchema.tablesVersion) < 3 { _ = try bringTablesUp() }
    if (store.schemaVersion ?? 0) < PostgresSchema.tokensVersion {
      buffer.upgradeSchema(to: PostgresSchema.tokensVersion)
    }
    buffer.putToken(TokenRows.encode(token), id: token.id)
  }
}
