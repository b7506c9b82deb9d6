import CLMDB
import MsglogCore

/// Named tokens (docs/FORMAT.md, "Tokens"): the `tokens` table, id →
/// the token's row (`TokenRows`), and `r` + a replica's id → the id of
/// the token that first pushed for it, opened when first needed like sync's
/// tables, so that a log without tokens has none. The first row moves
/// the database to `msglog/7`.
extension LMDBTables {
  static let tokensTable = "tokens"
  /// The first version that may hold named tokens.
  static let tokensVersion = 7
}

extension LMDBTables.LogTransaction: TokenTableWriter {
  /// The table; nil when it does not exist and `create` is false.
  private func tokensTable(create: Bool) throws -> Database? {
    try tableOpenedWhenNeeded(LMDBTables.tokensTable, create: create)
  }

  package func token(id: String) throws -> NamedToken? {
    guard let db = try tokensTable(create: false) else { return nil }
    return try txn.get(db, TokenRows.key(id)) { try TokenRows.decode(id: id, $0) }
  }

  package func forEachToken(_ body: (NamedToken) throws -> Bool) throws {
    guard let db = try tokensTable(create: false) else { return }
    try txn.withCursor(db) { cursor in
      var entry = try cursor.first()
      while let (key, value) = entry, !TokenRows.isOwnerKey(key) {
        let id = String(decoding: key, as: UTF8.self)
        guard NamedToken.isID(id) else { throw DerivedDamage(.tokens, "a key of \(key.count) bytes is not a token id") }
        guard try body(try TokenRows.decode(id: id, value)) else { return }
        entry = try cursor.next()
      }
    }
  }

  package func replicaOwner(_ replica: ItemID) throws -> String? {
    guard let db = try tokensTable(create: false) else { return nil }
    return try txn.get(db, TokenRows.ownerKey(replica)) { try TokenRows.decodeOwner(of: replica, $0) }
  }

  package func putReplicaOwner(_ id: String, of replica: ItemID) throws {
    let db = try tokensTable(create: true)!
    try moveContainer(atLeastTo: LMDBTables.tokensVersion)
    try txn.put(db, TokenRows.ownerKey(replica), TokenRows.encodeOwner(id, of: replica))
  }

  package func putToken(_ token: NamedToken) throws {
    let db = try tokensTable(create: true)!
    try moveContainer(atLeastTo: LMDBTables.tokensVersion)
    try txn.put(db, TokenRows.key(token.id), TokenRows.encode(token))
  }
}
