/// The named tokens a log keeps for its server (SPEC "Who may do what"):
/// LMDB's `tokens` table, PostgreSQL's `msglog.tokens`, a dictionary in
/// memory. Rows only: what they mean is `EventLog`'s business.
package protocol TokenTableReader: LogReader {
  /// The token with this id; nil when there is none.
  func token(id: String) throws -> NamedToken?
  /// Every token, in id order, until `body` returns false.
  func forEachToken(_ body: (NamedToken) throws -> Bool) throws
  /// The id of the token that first pushed for `replica`; nil for none.
  func replicaOwner(_ replica: ItemID) throws -> String?
}

package protocol TokenTableWriter: LogWriter, TokenTableReader {
  /// Writes the token's row (a new one, or one revoked or used since).
  /// The first moves the container to the version that holds tokens.
  func putToken(_ token: NamedToken) throws
  /// Gives `replica` to the token `id` (its first push under a named token).
  func putReplicaOwner(_ id: String, of replica: ItemID) throws
}
