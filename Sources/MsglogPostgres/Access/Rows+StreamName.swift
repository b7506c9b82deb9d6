import MsglogCore

extension Rows {
  /// A stream name as a table holds it (`bytea`, the name's bytes).
  ///
  /// msglog writes only names it validated, so one that is not UTF-8 was
  /// put there behind its back: damage, reported as such (`verify` names
  /// the table; `verify --repair` rebuilds it) — never skipped, which
  /// would make a stream vanish from a list or a write act on a stream
  /// without its head.
  func streamName(_ row: Int, _ column: Int, in table: DerivedRows.Table) throws(DerivedDamage) -> StreamName {
    guard let name = withBytes(row, column, { String(validating: $0, as: UTF8.self) }) else {
      throw DerivedDamage(table, "a stream name is not UTF-8")
    }
    return StreamName(name)
  }
}
