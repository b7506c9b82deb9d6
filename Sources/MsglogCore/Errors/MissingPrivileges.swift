/// What a role lacks on a server's database for what it was refused, as
/// the server answered when asked after the refusal (a PostgreSQL store
/// asks `has_table_privilege` and its kin): each privilege missing, with
/// the object it is on. An operator grants exactly these.
///
/// When the server could not be asked (`role` is nil), `grants` is what
/// the operation needs, all of it.
public struct MissingPrivileges: Equatable, Sendable {
  /// The role refused, as SQL writes it (quoted where it must be); nil
  /// when the server could not be asked.
  public var role: String?
  /// The privileges, each with what it is on.
  public var grants: [Grant]

  public init(role: String?, grants: [Grant]) {
    self.role = role
    self.grants = grants
  }

  /// Privileges on one object (`SELECT, INSERT` on `msglog.replicas`).
  public struct Grant: Equatable, Sendable {
    /// SQL's names, in the order SQL lists them (`SELECT`, `INSERT`, `UPDATE`, `DELETE`).
    public var privileges: [String]
    public var object: Object

    public init(_ privileges: [String], on object: Object) {
      self.privileges = privileges
      self.object = object
    }
  }

  /// What a privilege is on, as SQL's GRANT names it.
  public enum Object: Equatable, Sendable {
    /// A database: CREATE on it makes a schema (the log's first write).
    case database(String)
    case schema(String)
    /// Tables, each qualified by its schema (`msglog.replicas`).
    case tables([String])
    /// Every table of a schema.
    case allTables(inSchema: String)
  }

  /// "USAGE on schema msglog; SELECT, INSERT and UPDATE on msglog.replicas and msglog.sync_outcomes".
  public var words: String {
    grants.map { "\(Self.list($0.privileges)) on \($0.object.words)" }.joined(separator: "; ")
  }

  /// "a", "a and b", "a, b and c".
  static func list(_ items: [String]) -> String {
    guard items.count > 1 else { return items.first ?? "" }
    return items.dropLast().joined(separator: ", ") + " and " + items.last!
  }
}

extension MissingPrivileges.Object {
  var words: String {
    switch self {
    case .database(let name): return "database \(name), where the first write makes schema msglog"
    case .schema(let name): return "schema \(name)"
    case .tables(let names): return MissingPrivileges.list(names)
    case .allTables(let schema): return "every table of schema \(schema)"
    }
  }
}
