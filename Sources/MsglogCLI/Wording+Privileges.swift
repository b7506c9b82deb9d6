import Msglog

/// A privilege refused, told as the GRANTs that mend it: the server named
/// what the role lacks (`MissingPrivileges`), so the hint is the SQL an
/// owner runs, not a pointer to a list.
extension Wording {
  static func privilegeHint(_ missing: MissingPrivileges) -> String {
    let guide = "docs/POSTGRES.md, \"The team recipe\", lists what readers and writers need"
    guard let role = missing.role else { return "ask the database's owner to grant it (\(guide))" }
    let grants = missing.grants.map { grant(of: $0, to: role) }.joined(separator: "; ")
    if missing.grants.contains(where: { if case .database = $0.object { true } else { false } }) {
      return "the database's owner grants it with \(grants), or makes the log first with 'msglog init' (\(guide))"
    }
    // To a group rather than the person, as the recipe does: a leaver then
    // takes no privilege with them.
    return "if this role is to have it, the owner of schema msglog grants it with \(grants) "
      + "(or to a group \(role) is in; \(guide))"
  }

  /// One GRANT statement.
  static func grant(of grant: MissingPrivileges.Grant, to role: String) -> String {
    let privileges = grant.privileges.joined(separator: ", ")
    switch grant.object {
    case .database(let name): return "GRANT \(privileges) ON DATABASE \(name) TO \(role)"
    case .schema(let name): return "GRANT \(privileges) ON SCHEMA \(name) TO \(role)"
    case .tables(let names): return "GRANT \(privileges) ON \(names.joined(separator: ", ")) TO \(role)"
    case .allTables(let schema): return "GRANT \(privileges) ON ALL TABLES IN SCHEMA \(schema) TO \(role)"
    }
  }
}
