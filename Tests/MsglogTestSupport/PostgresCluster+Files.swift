import Foundation

extension PostgresCluster {
  /// The files of msglog's relations in `database` — its tables, their
  /// indexes, their TOAST tables and those tables' indexes — every fork
  /// and segment of each: where `purge` must leave no forgotten text.
  public static func msglogFiles(database: String) -> [String] {
    let relations = """
      SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.relnamespace = 'msglog'::regnamespace \
      OR c.oid IN (SELECT reltoastrelid FROM pg_class WHERE relnamespace = 'msglog'::regnamespace) \
      OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN \
      (SELECT reltoastrelid FROM pg_class WHERE relnamespace = 'msglog'::regnamespace))
      """
    let data = directory + "/data/"
    let paths = psql(relations, database: database).stdout.split(separator: "\n").map(String.init)
    return paths.flatMap { path -> [String] in
      let folder = data + path.prefix(upTo: path.lastIndex(of: "/")!)
      let node = String(path.suffix(from: path.index(after: path.lastIndex(of: "/")!)))
      let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
      return files.filter { $0 == node || $0.hasPrefix(node + ".") || $0.hasPrefix(node + "_") }
        .map { folder + "/" + $0 }
    }
  }

  /// Which of `msglogFiles(database:)` hold `needle`'s bytes.
  public static func msglogFiles(holding needle: String, database: String) -> [String] {
    msglogFiles(database: database).filter {
      FileManager.default.contents(atPath: $0)?.range(of: Data(needle.utf8)) != nil
    }
  }

  /// The files of the planner's statistics (`pg_statistic` and its TOAST
  /// table) in `database`, every fork and segment.
  public static func statisticsFiles(database: String) -> [String] {
    let relations = """
      SELECT pg_relation_filepath(c.oid) FROM pg_class c WHERE c.oid = 'pg_catalog.pg_statistic'::regclass \
      OR c.oid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'pg_catalog.pg_statistic'::regclass)
      """
    let data = directory + "/data/"
    return psql(relations, database: database).stdout.split(separator: "\n").flatMap { path -> [String] in
      let path = String(path)
      let folder = data + path.prefix(upTo: path.lastIndex(of: "/")!)
      let node = String(path.suffix(from: path.index(after: path.lastIndex(of: "/")!)))
      let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
      return files.filter { $0 == node || $0.hasPrefix(node + ".") || $0.hasPrefix(node + "_") }
        .map { folder + "/" + $0 }
    }
  }
}
