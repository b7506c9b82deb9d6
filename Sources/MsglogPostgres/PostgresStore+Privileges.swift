import MsglogCore

/// What a role lacks, asked of the server once it refused a privilege
/// (SQLSTATE 42501): its message names one object ("permission denied for
/// table replicas"), not which privilege, nor what else is missing. So the
/// server is asked, on a connection of its own (the refused transaction is
/// dead), which of what the operation needs this role has — and the
/// refusal names exactly the rest, all of it, so that one round of GRANTs
/// mends it.
extension PostgresStore {
  /// The refusal of a privilege, with what the role lacks; what the
  /// operation needs when the server cannot be asked.
  func privilegeRefusal(_ error: PostgresError, writing: Bool) -> MsglogError {
    let missing = (try? missingPrivileges(writing: writing)) ?? nil
    return .permissionDenied(
      location: shown, writing: writing, reason: error.message, missing: missing ?? Self.needs(writing: writing))
  }

  /// What reading or writing needs, all of it: docs/POSTGRES.md's GRANTs.
  static func needs(writing: Bool) -> MissingPrivileges {
    MissingPrivileges(
      role: nil,
      grants: [
        .init(["USAGE"], on: .schema("msglog")),
        .init(tablePrivileges(writing: writing), on: .allTables(inSchema: "msglog")),
      ])
  }

  /// What a role takes on each of msglog's tables.
  static func tablePrivileges(writing: Bool) -> [String] {
    writing ? ["SELECT", "INSERT", "UPDATE", "DELETE"] : ["SELECT"]
  }

  /// What this role lacks for reading or writing the log, as the server
  /// says; nil when it lacks nothing the server can tell (a row-level
  /// policy, say), so the refusal names what the operation needs.
  private func missingPrivileges(writing: Bool) throws -> MissingPrivileges? {
    let connection = try borrow().connection
    defer { giveBack(connection) }
    let privileges = Self.tablePrivileges(writing: writing)
    let answers = try connection.pipeline([Self.roleAndSchema, Self.tables(privileges)])
    let schema = answers[0]
    let role = schema.text(0, 0) ?? ""
    var grants: [MissingPrivileges.Grant] = []
    guard schema.bool(0, 3) == true else {
      // No schema yet: writing makes it, in the database.
      if writing, schema.bool(0, 2) == false {
        grants.append(.init(["CREATE"], on: .database(schema.text(0, 1) ?? "")))
      }
      return grants.isEmpty ? nil : MissingPrivileges(role: role, grants: grants)
    }
    if schema.bool(0, 4) == false { grants.append(.init(["USAGE"], on: .schema("msglog"))) }
    // The tables there, each with the privileges it lacks; grouped by what they lack.
    let tables = answers[1]
    var lacking: [(privileges: [String], tables: [String])] = []
    for row in 0..<tables.count {
      let name = "msglog." + (tables.text(row, 0) ?? "")
      let missing = privileges.indices.filter { tables.bool(row, 1 + $0) == false }.map { privileges[$0] }
      guard !missing.isEmpty else { continue }
      if let group = lacking.firstIndex(where: { $0.privileges == missing }) {
        lacking[group].tables.append(name)
      } else {
        lacking.append((missing, [name]))
      }
    }
    for group in lacking {
      let every = group.tables.count == tables.count && tables.count > 2
      grants.append(.init(group.privileges, on: every ? .allTables(inSchema: "msglog") : .tables(group.tables)))
    }
    return grants.isEmpty ? nil : MissingPrivileges(role: role, grants: grants)
  }

  /// The role (as SQL writes it), the database (likewise), whether it may
  /// create schemas in it, whether schema msglog is there, and whether the
  /// role may use it.
  private static let roleAndSchema = Statement(
    "SELECT quote_ident(current_user), quote_ident(current_database()), "
      + "has_database_privilege(current_database(), 'CREATE'), n.oid IS NOT NULL, has_schema_privilege(n.oid, 'USAGE') "
      + "FROM (VALUES (1)) AS one LEFT JOIN pg_namespace n ON n.nspname = 'msglog'")

  /// msglog's tables that are there, in `tableNames`' order, with whether
  /// the role has each of `privileges` on them.
  private static func tables(_ privileges: [String]) -> Statement {
    let names = PostgresSchema.tableNames.map { "'\($0)'" }.joined(separator: ", ")
    let columns = privileges.map { ", has_table_privilege(c.oid, '\($0)')" }.joined()
    return Statement(
      "SELECT t.name\(columns) FROM unnest(ARRAY[\(names)]) WITH ORDINALITY AS t(name, n) "
        + "JOIN pg_class c ON c.relname = t.name "
        + "AND c.relnamespace = (SELECT oid FROM pg_namespace WHERE nspname = 'msglog') ORDER BY t.n")
  }
}
