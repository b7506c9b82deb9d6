/// A derived row that cannot be what the log says it should be: damaged
/// behind msglog's back. The log itself may be intact, in which case the
/// derived tables can be rebuilt from it.
public struct DerivedDamage: Error, Equatable, CustomStringConvertible, Sendable {
  /// The table concerned (by name, as `verify` reports it).
  public var table: String
  public var detail: String

  package init(_ table: DerivedRows.Table, _ detail: String) {
    self.table = table.description
    self.detail = detail
  }

  package init(table: String, _ detail: String) {
    self.table = table
    self.detail = detail
  }

  public var description: String { "table \(table): \(detail)" }
}
