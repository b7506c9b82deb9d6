import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// A password in a PostgreSQL URL never reaches any output, in whatever form
/// libpq reads it: in the user part (raw `?`, `#`, `:` included), as a query
/// keyword, percent-encoded (`?%70assword=`, `?pass%77ord=`), under an
/// upper-case scheme — through every command, `serve`'s banner and its
/// replies, against a server that lets the role in and one that refuses it.
@Suite(.serialized) struct PostgresSecretTests {
  /// The role's password: `?`, `#` and `:` may stand unencoded in a URL's user part.
  static let password = "tiger7?lion8#bear9:wolf6"
  /// A wrong one, with the characters that may not (`/`, `@`).
  static let wrong = "tiger3/lion4@bear5?wolf2"
  /// Every piece of either: none may appear in any output.
  static let fragments = ["tiger7", "lion8", "bear9", "wolf6", "tiger3", "lion4", "bear5", "wolf2"]

  static func encoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
  }

  /// The URL forms that carry `secret` for `role` on `database`.
  static func forms(role: String, secret: String, hostPort: String, database: String) -> [String] {
    let e = encoded(secret)
    return [
      "postgres://\(role):\(e)@\(hostPort)/\(database)",
      "postgres://\(role)@\(hostPort)/\(database)?password=\(e)",
      "postgres://\(role)@\(hostPort)/\(database)?%70assword=\(e)",
      "postgres://\(role)@\(hostPort)/\(database)?pass%77ord=\(e)&sslmode=disable",
      "POSTGRES://\(role):\(e)@\(hostPort)/\(database)",
      "PostgreSQL://\(role)@\(hostPort)/\(database)?application_name=team&password=\(e)",
      "postgres://\(role)@\(hostPort)/\(database)?sslpassword=\(e)&password=\(e)",
    ]
  }

  /// Every command, with what it reads on stdin.
  static let commands: [([String], String)] = [
    (["list"], ""), (["list", "--json"], ""), (["append", "x"], ""), (["insert", "0", "y"], ""),
    (["move", "0", "1"], ""), (["remove", "00000000"], ""), (["replay", "--at", "1"], ""), (["log"], ""),
    (["log", "--follow", "--from", "1", "--limit", "1"], ""),
    (["streams"], ""), (["diff", "0", "1"], ""), (["export"], ""), (["import"], #"{"op":"append","text":"i"}"#),
    (["verify"], ""), (["verify", "--repair"], ""), (["completions", "--list-streams"], ""),
    (["completions", "bash"], ""), (["help"], ""),
  ]

  func expectNoSecret(_ text: String, _ what: String) {
    for fragment in Self.fragments {
      #expect(!text.contains(fragment), "\(what) printed a piece of a password (\(fragment)): \(text)")
    }
    #expect(!text.contains(PostgresCluster.password), "\(what) printed the cluster's password")
  }

  @Test func noFormOfAPasswordReachesAnyOutput() throws {
    let role = PostgresCluster.createRole(password: Self.password)
    defer { PostgresCluster.dropRole(role) }
    do {
      let s = Sandbox(.postgres)
      let database = String(s.db.split(separator: "/").last!)
      #expect(PostgresCluster.psql("ALTER DATABASE \(database) OWNER TO \(role)").code == 0)
      let hostPort = PostgresCluster.hostPort
      let shown = "postgres://\(role)@\(hostPort)/\(database)"
      let lettingIn =
        Self.forms(role: role, secret: Self.password, hostPort: hostPort, database: database)
        + ["postgres://\(role):\(Self.password)@\(hostPort)/\(database)"]  // raw ? # : in the user part
      let refused =
        Self.forms(role: role, secret: Self.wrong, hostPort: hostPort, database: database) + [
          "postgres://\(role):\(Self.wrong)@\(hostPort)/\(database)",  // raw / and @: libpq would misread it
          "postgres://\(role):tiger3%zzlion4@\(hostPort)/\(database)",  // libpq cannot parse it
          "postgres://\(role)@\(hostPort)/\(database)?Password=\(Self.encoded(Self.wrong))",  // no such keyword
          "postgres://\(role):\(Self.encoded(Self.password))@127.0.0.1:1/\(database)",  // nothing listens
        ]
      #expect(s.run(["--db", lettingIn[0], "append", "seed"], useDefaultDB: false).code == 0)
      for (n, url) in (lettingIn + refused).enumerated() {
        let letsIn = n < lettingIn.count
        for (args, stdin) in Self.commands {
          let r = s.run(["--db", url] + args, stdin: Data(stdin.utf8), useDefaultDB: false)
          expectNoSecret(r.stdout + r.stderr, "\(args) on form \(n)")
          if args == ["list"] || args == ["append", "x"] {
            #expect((r.code == 0) == letsIn, "\(args) on form \(n): \(r)")
          }
          if !letsIn && args.first != "help" && args.first != "completions" {
            #expect(r.code == 1 && r.stderr.hasPrefix("msglog: ") && r.stdout.isEmpty, "\(args) on form \(n): \(r)")
          }
        }
        // The same location from the environment.
        let r = s.run(["list"], environment: ["MSGLOG_DB": url], useDefaultDB: false)
        expectNoSecret(r.stdout + r.stderr, "MSGLOG_DB on form \(n)")
        #expect((r.code == 0) == letsIn, "MSGLOG_DB on form \(n): \(r)")

        // serve: its banner, its replies (errors included), and all it printed.
        let server = ServedLog(s, ["--db", url], useDefaultDB: false)
        if server.url != nil {
          let replies = [
            server.request("GET", "/api/items?stream=main"), server.request("POST", "/api/append", #"{"text":"s"}"#),
            server.request("GET", "/api/events?from=1"), server.request("GET", "/api/streams"),
          ]
          for reply in replies { #expect((reply.status == 200) == letsIn, "serve on form \(n): \(reply)") }
        }
        let printed = server.stop()
        expectNoSecret(printed.stdout + printed.stderr + server.replies.joined(), "serve on form \(n)")
        if letsIn {
          #expect(printed.stdout.hasPrefix("msglog: serving \(n == 5 ? "postgresql" : "postgres")://"), "\(printed)")
        }
      }
      // The plainest form is shown exactly, without its password.
      let server = ServedLog(s, ["--db", lettingIn[0]], useDefaultDB: false)
      let printed = server.stop()
      #expect(printed.stdout.hasPrefix("msglog: serving \(shown) on http://127.0.0.1:"), "\(printed)")
      #expect(s.run(["--db", lettingIn[0], "verify"], useDefaultDB: false).code == 0)
    }
  }

  /// `EventLog.location` is the URL rebuilt from libpq's parse, without what
  /// libpq takes for a password; URLs libpq would misread are refused
  /// before anything connects, naming no part of them but the scheme.
  @Test func theLocationIsWhatLibpqParsedLessItsSecrets() throws {
    let shownAs: [(String, String)] = [
      ("postgres://ann:hunter2@db.example:5433/team", "postgres://ann@db.example:5433/team"),
      ("postgres://ann@db.example/team?%70assword=hunter2", "postgres://ann@db.example/team"),
      (
        "postgresql://ann@db.example/team?pass%77ord=hunter2&sslmode=require",
        "postgresql://ann@db.example/team?sslmode=require"
      ),
      ("POSTGRES://ann:hunter2@db.example/team", "postgres://ann@db.example/team"),
      ("postgres://ann:hun?ter#2@db.example/team", "postgres://ann@db.example/team"),
      (
        "postgres://ann:hun%2Fter%402@db.example/team?password=hunter2&connect_timeout=5",
        "postgres://ann@db.example/team?connect_timeout=5"
      ),
      (
        "postgres://ann@db.example/team?sslpassword=hunter2&application_name=board",
        "postgres://ann@db.example/team?application_name=board"
      ),
      ("postgres://h1:5432,h2:5433/team", "postgres://h1:5432,h2:5433/team"),
      ("postgres://[::1]:5432/team", "postgres://[::1]:5432/team"),
      ("postgres:///team?host=/var/run/postgresql&port=5433", "postgres:///team?host=/var/run/postgresql&port=5433"),
      ("postgres://", "postgres://"),
    ]
    for (url, shown) in shownAs {
      #expect(try EventLog(url).location == shown, "\(url)")
    }
    let refused: [(String, String)] = [
      ("postgres://ann:hun/ter2@db.example/team", "percent-encode '@' as %40 and '/' as %2F"),
      ("postgres://ann:hun@ter2@db.example/team", "percent-encode '@' as %40 and '/' as %2F"),
      ("postgres://ann:hun%zzter2@db.example/team", "libpq cannot parse the URL (invalid percent-encoded token)"),
      (
        "postgres://ann@db.example/team?hunter2",
        #"libpq cannot parse the URL (missing key/value separator "=" in URI query parameter)"#
      ),
    ]
    for (url, reason) in refused {
      let error = #expect(throws: MsglogError.self) { _ = try EventLog(url) }
      guard case .cannotConnect(let location, let why)? = error else {
        Issue.record("\(url): \(String(describing: error))")
        continue
      }
      #expect(location == "postgres://…" && why.contains(reason), "\(url): \(why)")
      #expect(!"\(error!)".contains("ter2"), "\(url): \(why)")
    }
  }
}
