/// Named tokens in memory, as LMDB keeps them (`LMDBTables+Tokens`).
extension MemoryStore.Transaction: TokenTableWriter {
  func token(id: String) throws -> NamedToken? { state.tokens[id] }

  func forEachToken(_ body: (NamedToken) throws -> Bool) throws {
    for id in state.tokens.keys.sorted() { guard try body(state.tokens[id]!) else { return } }
  }

  func putToken(_ token: NamedToken) throws { state.tokens[token.id] = token }

  func replicaOwner(_ replica: ItemID) throws -> String? { state.replicaOwners[replica] }

  func putReplicaOwner(_ id: String, of replica: ItemID) throws { state.replicaOwners[replica] = id }
}
