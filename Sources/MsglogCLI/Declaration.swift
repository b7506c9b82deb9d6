import MsglogCore

/// The command line, declared once.
///
/// Parsing and its usage errors, `help`, the shell completions and the man
/// page are all generated from these values (swift-argument-parser's shape:
/// one declaration, many generators), so they cannot disagree.

/// The options every command may use, each declared here once.
enum Options {
  static let db = OptionDeclaration(
    name: "db", value: "PATH", help: "database directory or postgres:// URL (default: $MSGLOG_DB, else ./msglog.lmdb)",
    completion: .directories)
  static let stream = OptionDeclaration(
    name: "stream", value: "NAME", help: "stream to use (default: $MSGLOG_STREAM, else main)", completion: .streams)
  /// `--stream` as export reads it: export ignores MSGLOG_STREAM, so that
  /// `export | import` copies the whole log whatever the shell has set.
  static let exportStream = OptionDeclaration(
    name: "stream", value: "NAME",
    help: "only this stream's events (default: every stream; MSGLOG_STREAM does not narrow it)",
    completion: .streams)
  static let json = OptionDeclaration(name: "json", help: "print JSON instead of text")
  static let help = OptionDeclaration(name: "help", short: "h", help: "show this help")
  static let version = OptionDeclaration(name: "version", help: "print the version")

  static let sender = OptionDeclaration(name: "sender", value: "NAME", help: "who wrote the message")
  /// `edit`'s: the insert's sender stays the author.
  static let editor = OptionDeclaration(
    name: "sender", value: "NAME", help: "who edited the message (its author stays the insert's sender)")
  /// `undo`'s: named on an edit's undoing, as on any edit.
  static let undoer = OptionDeclaration(
    name: "sender", value: "NAME", help: "who undid (named on the edit that undoes an edit, not elsewhere)")
  static let id = OptionDeclaration(name: "id", value: "UUID", help: "use this id instead of a new random one")
  static let lines = OptionDeclaration(
    name: "lines", help: "read stdin, one message per line, all in one transaction")
  static let expectVersion = OptionDeclaration(
    name: "expect-version", value: "N", help: "refuse (exit 75) unless the stream is at version N")
  static let rebase = OptionDeclaration(
    name: "rebase",
    help: "with --expect-version: if the stream moved on since, apply what was meant at version N instead of exit 75")
  static let index = OptionDeclaration(
    name: "index", value: "N", help: "where it goes back (default: right after its predecessor)")
  static let at = OptionDeclaration(name: "at", value: "SEQ", help: "stop after this event (0…head)")
  static let from = OptionDeclaration(name: "from", value: "SEQ", help: "start at this seq")
  static let limit = OptionDeclaration(name: "limit", value: "N", help: "print at most N events")
  static let all = OptionDeclaration(name: "all", help: "events of every stream")
  static let follow = OptionDeclaration(
    name: "follow", short: "f", help: "keep printing events as they commit, until interrupted")
  static let repair = OptionDeclaration(
    name: "repair", help: "rebuild the derived tables from the log when they differ")
  static let listen = OptionDeclaration(
    name: "listen", value: "ADDR:PORT", help: "where to listen (default 127.0.0.1:8080; port 0: any free port)")
  static let token = OptionDeclaration(
    name: "token", value: "TOKEN",
    help: "bearer token every API request must send (default: $MSGLOG_TOKEN); needed beyond localhost")
  static let allowHost = OptionDeclaration(
    name: "allow-host", value: "NAME",
    help: "also answer requests for this host name (besides localhost, loopback addresses and ADDR)",
    repeatable: true)
  static let allowOrigin = OptionDeclaration(
    name: "allow-origin", value: "ORIGIN",
    help: "let pages from this origin (http://host:port) call the API, with CORS headers", repeatable: true)
  // A replica's options (clone, sync, status) are in Declaration+Sync.swift.
  static let logFormat = OptionDeclaration(
    name: "log-format", value: "FORMAT",
    help: "each request's line on stderr: text (default), json, or none", completion: .words(["text", "json", "none"]))
  static let noMetrics = OptionDeclaration(name: "no-metrics", help: "count nothing and serve no /metrics")
  static let tlsCert = OptionDeclaration(
    name: "tls-cert", value: "FILE",
    help: "serve HTTPS with this PEM certificate (its chain after it); needs --tls-key",
    completion: .files)
  static let tlsKey = OptionDeclaration(
    name: "tls-key", value: "FILE", help: "the PEM private key of --tls-cert", completion: .files)
  static let compact = OptionDeclaration(
    name: "compact", help: "leave out free pages and renumber the rest: a smaller copy")
  static let man = OptionDeclaration(name: "man", help: "print the manual page (roff, for man(1)) instead")
  static let listStreams = OptionDeclaration(
    name: "list-streams", help: "print the database's stream names, one per line (for completion scripts)")

  /// The options shared by every command, in the order help lists them.
  static let shared = [db, stream, json]
  /// Meta options any command takes.
  static let meta = [help, version]

  /// Every option any command takes, once each by long name (where two
  /// share a name, the one `CommandDeclaration.everyOption` keeps): what
  /// the parser must know before it knows the command (`Arguments`).
  /// Listed, not gathered from the command table, which every process
  /// would otherwise build whole to parse its first option — half of
  /// `msglog --version`'s instructions; `DeclarationTests` holds the two equal.
  static let every = [
    db, stream, json, help, version, sender, id, lines, expectVersion, rebase, index, at, from, limit, all, follow,
    repair, listen, token, allowHost, allowOrigin, publicOrigin, trustedProxy, logFormat, noMetrics, tlsCert, tlsKey,
    compact, man, listStreams, alsoPurge, cacert, reset, remote, syncTimeout, verbose, clear, read, write, erase,
    expires, trimBefore, olderThan, dryRun,
  ]
}

/// The commands.
enum CommandName: String, CaseIterable, Sendable {
  case append, insert, move, remove, edit, restore, undo, erase, purge, trim, list, replay, log, streams, diff, export
  case `import`, verify, backup
  case initialize = "init"
  case serve, token, clone, sync, status, completions, help
}

/// One command: what it accepts and its help page. (Its handler is the
/// method `Invocation.run` dispatches to; the declaration stays plain data,
/// so that the argument fuzzer can compile it alone.)
struct CommandDeclaration: Sendable {
  var name: CommandName
  /// One line for the command table of `msglog --help`.
  var summary: String
  var overview: String
  var arguments: [ArgumentDeclaration] = []
  var options: [OptionDeclaration] = []
  /// Which of `--db`, `--stream`, `--json` it uses; any other is a usage error.
  var shared: [OptionDeclaration] = Options.shared
  /// Options it accepts and ignores: a command that reads no log may be
  /// told which log, stream or output form to use without harm, so that an
  /// alias such as `alias team='msglog --db team.lmdb'` still gets `team
  /// help`. They are not listed in its help.
  var tolerated: [OptionDeclaration] = []
  var example: String

  /// Every option it accepts, shared and meta ones included.
  var allOptions: [OptionDeclaration] { options + shared + Options.meta }
  /// The options its help page lists and a shell offers after it: it
  /// takes --version too, but that one belongs before a command.
  var listedOptions: [OptionDeclaration] { options + shared + [Options.help] }

  var usage: String {
    var words = ["msglog", name.rawValue]
    words += options.map { "[\($0.synopsis)]" }
    words += arguments.map { argument in
      let word = argument.name + (argument.repeating ? "..." : "")
      return argument.optional ? "[\(word)]" : word
    }
    return words.joined(separator: " ")
  }

  static func named(_ name: String) -> CommandDeclaration? {
    CommandName(rawValue: name).map(declaration)
  }

  /// A write's `--expect-version`, and `--rebase` where its operation
  /// rebases (`WriteOperation`'s declaration, which every door reads).
  static func versionOptions(_ operation: WriteOperation) -> [OptionDeclaration] {
    operation.rebases ? rebasableOptions : writeOptions
  }
  private static let writeOptions = [Options.expectVersion]
  private static let rebasableOptions = [Options.expectVersion, Options.rebase]
  static let textOptions = [Options.sender, Options.id, Options.lines]

  /// The declaration of `name`, made when it is asked for: a process
  /// makes its own command's, not the whole table (which `ordered` makes,
  /// for help, the manual and completions).
  static func declaration(_ name: CommandName) -> CommandDeclaration {
    switch name {
    case .append:
      return CommandDeclaration(
        name: .append, summary: "append a message at the end of the stream",
        overview: """
          Append a message at the end of the stream and print its id. The words of TEXT are \
          joined by spaces; without TEXT the message is all of stdin, less one trailing newline. \
          With --lines every non-blank line of stdin becomes one message, all appended in a single \
          transaction.
          """,
        arguments: [
          ArgumentDeclaration(name: "TEXT", help: "the message (default: stdin)", optional: true, repeating: true)
        ],
        options: textOptions + versionOptions(.append),
        example: "msglog append --sender ann \"see you at 10\"\nprintf 'one\\ntwo\\n' | msglog append --lines")
    case .insert:
      return CommandDeclaration(
        name: .insert, summary: "insert a message at an index",
        overview: """
          Insert a message so that it ends at INDEX (0 is the top; the item count appends) and \
          print its id. Text is read as for append; with --lines the messages go to INDEX, \
          INDEX+1, and so on.
          """,
        arguments: [
          ArgumentDeclaration(name: "INDEX", help: "position of the new item, 0…count"),
          ArgumentDeclaration(name: "TEXT", help: "the message (default: stdin)", optional: true, repeating: true),
        ],
        options: textOptions + versionOptions(.insert),
        example: "msglog insert 0 \"pinned: read the rules\"\nmsglog insert 2 --expect-version 17 --rebase \"next\"")
    case .move:
      return CommandDeclaration(
        name: .move, summary: "move an item from one index to another",
        overview: """
          Move the item at index FROM so that it ends at index TO, as a dragged cell does. \
          Moving an item onto its own index changes nothing and appends no event. With \
          --expect-version N --rebase, FROM and TO are indices of the list at version N: when \
          the stream has moved on since, the item that was at FROM goes right after the item \
          it would have followed at TO there (or the first one before that still there).
          """,
        arguments: [
          ArgumentDeclaration(name: "FROM", help: "the item's current index"),
          ArgumentDeclaration(name: "TO", help: "its final index"),
        ],
        options: versionOptions(.move), example: "msglog move 3 0\nmsglog move 3 0 --expect-version 17 --rebase")
    case .remove:
      return CommandDeclaration(
        name: .remove, summary: "remove an item by id",
        overview: """
          Remove a live item of the stream. ID is its full UUID in any case, or at least 8 \
          leading characters of it (the short id 'list' prints) that match exactly one item.
          """,
        arguments: [ArgumentDeclaration(name: "ID", help: "a UUID, or a unique prefix of 8 or more characters")],
        options: versionOptions(.remove), example: "msglog remove 3f2a1b4c")
    case .edit:
      return CommandDeclaration(
        name: .edit, summary: "give an item new text",
        overview: """
          Give a live item new text and print 'edited' and its id. It keeps its place, author, \
          time and seq, and shows when it was edited. ID as for remove; TEXT as for append (its \
          words joined by spaces, or all of stdin). The same text again changes nothing.
          """,
        arguments: [
          ArgumentDeclaration(name: "ID", help: "a UUID, or a unique prefix of 8 or more characters"),
          ArgumentDeclaration(name: "TEXT", help: "the new text (default: stdin)", optional: true, repeating: true),
        ],
        options: [Options.editor] + versionOptions(.edit), example: "msglog edit 3f2a1b4c \"Room 4C, not 4B\"")
    case .restore:
      return CommandDeclaration(
        name: .restore, summary: "bring a removed item back",
        overview: """
          Bring a removed item back with its id, text, author, time and seq, and print where it \
          went. Without --index it goes right after its predecessor: walking back from the item \
          that was before it when it was removed to the first one still there (to the top when \
          none is). ID is a full UUID or a unique prefix among the stream's removed items.
          """,
        arguments: [ArgumentDeclaration(name: "ID", help: "a UUID, or a unique prefix of a removed item's id")],
        options: [Options.index] + versionOptions(.restore),
        example: "msglog restore 3f2a1b4c\nmsglog restore 3f2a1b4c --index 0")
    case .undo:
      return CommandDeclaration(
        name: .undo, summary: "undo an event (the latest by default); undo an undo to redo",
        overview: """
          Append the event that undoes event SEQ of the stream and print what that event's own \
          command prints. An insert or a restore is undone by a remove, a remove by a restore \
          after its predecessor, an edit by an edit back to the text before it, a move by a move \
          back after its predecessor. Without SEQ: the stream's latest event that is not an \
          undo, is not undone, and whose undoing changes something. Undoing an undo redoes. An \
          undoing that changes nothing appends nothing.
          """,
        arguments: [ArgumentDeclaration(name: "SEQ", help: "the seq of the event to undo", optional: true)],
        options: [Options.undoer] + versionOptions(.undo), example: "msglog undo\nmsglog undo 42 --sender ann")
    case .list:
      return CommandDeclaration(
        name: .list, summary: "print the stream's items in order",
        overview: """
          Print the stream's items in order, one per line: index, short id, sender (- when \
          none) and text, with control characters escaped. A stream with no events is empty.
          """,
        example: "msglog --stream standup list")
    case .replay:
      return CommandDeclaration(
        name: .replay, summary: "rebuild the stream from the log, now or at a past seq",
        overview: """
          Rebuild the stream from the log and print it as 'list' does: with --at, as it was \
          right after event SEQ (0 is empty); without, a full replay up to the head.
          """,
        options: [Options.at], example: "msglog replay --at 42")
    case .log:
      return CommandDeclaration(
        name: .log, summary: "print the events, oldest first; --follow keeps printing",
        overview: """
          Print the stream's events, oldest first, one per line: seq, time, stream, version, \
          op, item id and the op's fields. With --follow, keep printing events as any process \
          commits them: without --from, only new ones; with --from, the history first. Ends \
          on Ctrl-C, SIGTERM, a closed stdout, or after --limit events (exit 0), or with exit 1 \
          when the database is removed or replaced under it.
          """,
        options: [Options.from, Options.limit, Options.all, Options.follow],
        example: "msglog log --all --from 100 --limit 20\nmsglog log --follow --json")
    case .streams:
      return CommandDeclaration(
        name: .streams, summary: "list the streams with their counts and versions",
        overview: "List every stream with its live item count, its version and the seq of its last event.",
        shared: [Options.db, Options.json], example: "msglog streams")
    case .diff:
      return CommandDeclaration(
        name: .diff, summary: "the changes that turn the stream at seq A into the stream at seq B",
        overview: """
          Print the change set from the stream as of seq A to the stream as of seq B (A may be \
          greater than B) as a collection view's batch update takes it: removals ('-', index in \
          A, by descending index), insertions ('+', index in B, ascending), then moves ('>', \
          index in A -> index in B, by ascending target), then edits ('~', index in B, the new \
          text). The moves are as few as possible.
          """,
        arguments: [
          ArgumentDeclaration(name: "A", help: "the seq of the old list (0…head)"),
          ArgumentDeclaration(name: "B", help: "the seq of the new list (0…head)"),
        ],
        example: "msglog diff 40 52")
    case .export:
      return CommandDeclaration(
        name: .export, summary: "print every event as JSON lines",
        overview: """
          Print every event of every stream, oldest first, as JSON lines (the 'log --json' form). \
          'msglog export | msglog --db other import' rebuilds the same log in an empty database. \
          With --stream, only that stream's events (which import accepts as they are).
          """,
        // Its lines are JSON with or without --json: accepted, not listed.
        shared: [Options.db, Options.exportStream], tolerated: [Options.json], example: "msglog export > backup.jsonl")
    case .import:
      return CommandDeclaration(
        name: .import, summary: "apply JSON lines atomically",
        overview: """
          Apply JSON lines from FILE (or stdin, or '-') atomically: every line is validated as \
          the command line would validate it, and the first bad line is reported with its \
          number and nothing is written. Lines are read and applied a piece at a time, so a \
          large import is never held in memory whole. Ops: append, insert, remove, move, edit, \
          restore (any with "undoes"), erase, unsign; 'export' output is accepted as is, erased events \
          ("erased":S) included.
          """,
        arguments: [
          ArgumentDeclaration(
            name: "FILE", help: "JSON lines to apply (default: stdin)", optional: true, completion: .files)
        ],
        example:
          "msglog --db copy.lmdb import backup.jsonl\necho '{\"op\":\"append\",\"text\":\"hi\"}' | msglog import")
    case .verify:
      return CommandDeclaration(
        name: .verify, summary: "check checksums, seqs and derived tables against a replay",
        overview: """
          Check every record's checksum, that seqs run 1…head without a gap, that the log \
          replays cleanly, and that the derived tables (stream heads, order, id index, event \
          index, checkpoints) equal a full replay. Prints 'ok' and counts, or each problem found \
          (exit 1). With --repair, derived tables that differ are rebuilt from the events (the \
          events themselves are never changed).
          """,
        options: [Options.repair], shared: [Options.db, Options.json],
        example: "msglog verify\nmsglog verify --repair")
    case .backup:
      return CommandDeclaration(
        name: .backup, summary: "copy the live database to a new directory while writers go on",
        overview: """
          Copy the LMDB database to DEST, a new directory, while other processes go on \
          reading and writing: LMDB's own copy of one read transaction, made under a \
          private name beside DEST, synced, and renamed to DEST only when whole (a backup \
          cut short leaves nothing at DEST). The copy is a complete database, equal to the \
          log as of the seq printed. DEST must not exist. With --compact, free pages are \
          left out. A log on PostgreSQL is copied with PostgreSQL's own tools instead.
          """,
        arguments: [
          ArgumentDeclaration(name: "DEST", help: "the new directory (must not exist)", completion: .directories)
        ],
        options: [Options.compact], shared: [Options.db, Options.json],
        example:
          "msglog backup /backups/board-$(date +%F).lmdb\nmsglog --db board.lmdb backup --compact board-copy.lmdb")
    case .initialize:
      return CommandDeclaration(
        name: .initialize, summary: "make an empty log, or the tables an older msglog's log lacks",
        overview: """
          Make the log's place ready without writing an event: an empty database where there is \
          none (on PostgreSQL, schema msglog with every table the log may need, owned by the \
          role that runs it), or, for a PostgreSQL log made by an older msglog, the tables it \
          lacks (as the owner of schema msglog). A log that is ready is left as it is, so it is \
          safe to run again. A first write makes the log too; init is for setting it up as one \
          role and granting others their privileges on its tables.
          """,
        shared: [Options.db, Options.json],
        example: "msglog --db postgres://owner@db.example.org/team init")
    case .serve:
      return CommandDeclaration(
        name: .serve, summary: "serve the log over HTTP: a JSON API, live events and a web page",
        overview: """
          Serve the database over HTTP until Ctrl-C, SIGTERM or SIGHUP: a JSON API with the shapes of \
          --json (GET /api/streams, /api/items?stream=S&at=SEQ, /api/events?from=SEQ, \
          /api/diff?stream=S&from=A&to=B; POST /api/append, /api/insert, /api/move, /api/remove, \
          /api/edit, /api/restore, /api/undo, /api/erase with a JSON body), Server-Sent Events at /api/follow (id is the seq; Last-Event-ID \
          resumes), the sync protocol replicas use (GET /api/sync, POST /api/sync/push, GET /api/sync/pull, GET /api/sync/bases), \
          and a web page at / for chats and boards. Listening beyond localhost needs \
          a token, which every API request sends as 'Authorization: Bearer TOKEN'; once the database \
          holds a named token ('msglog token'), every API request needs one, on every address, and \
          may do only what its scopes give. Only requests \
          for localhost, a loopback address, ADDR or an --allow-host name are answered, and \
          writes only from the page itself or an --allow-origin origin (DNS rebinding and \
          cross-site requests are refused with 403). Each request gets a line on stderr \
          (--log-format); GET /livez and /readyz answer health checks without a token, /metrics \
          shows Prometheus metrics, /api/openapi.json describes the API, /api/whoami tells a token \
          whose it is (the page's "Signed in as NAME"); --tls-cert and --tls-key \
          serve HTTPS. Behind a reverse proxy that ends TLS, --public-origin names the origin the \
          page is reached at, and --trusted-proxy the proxy whose forwarded client address is believed.
          """,
        options: [
          Options.listen, Options.token, Options.allowHost, Options.allowOrigin, Options.publicOrigin,
          Options.trustedProxy, Options.tlsCert, Options.tlsKey, Options.logFormat, Options.noMetrics,
        ], shared: [Options.db],
        example: """
          msglog serve
          MSGLOG_TOKEN=$(openssl rand -hex 16) msglog serve --listen 0.0.0.0:8443 --tls-cert cert.pem --tls-key key.pem
          """)
    case .token: return tokenCommand
    case .clone:
      return CommandDeclaration(
        name: .clone, summary: "make a replica of a remote log, to work on offline",
        overview: """
          Make the database (--db, which must not exist or be an empty directory) a replica of \
          the log at URL: the http:// or https:// address of a msglog serve, or a postgres:// \
          location. Every event of every stream is copied with its seq, version and time. In a \
          replica every command works offline: writes are validated against the local view and \
          kept as pending changes until 'msglog sync'. A clone cut short leaves the directory as \
          it was. Give the token in MSGLOG_TOKEN rather than --token, which other users see in ps.
          """,
        arguments: [
          ArgumentDeclaration(name: "URL", help: "the remote log: http(s):// of msglog serve, or postgres://")
        ],
        options: [Options.remoteToken, Options.cacert, Options.syncTimeout], shared: [Options.db, Options.json],
        example:
          "msglog --db board.lmdb clone http://team.example:8080\nmsglog --db board.lmdb clone postgres://team@db/msglog"
      )
    case .sync:
      return CommandDeclaration(
        name: .sync, summary: "push the replica's pending changes, then pull what it lacks",
        overview: """
          Sync a replica with the remote it was cloned from: push its pending changes in order \
          (each is done exactly once, where its user meant it, or refused with its reason), then \
          pull every event it lacks, until nothing is pending and it is at the remote's head. \
          Prints what was pushed, rebased, refused and pulled; each refusal is also named on \
          stderr and kept for 'msglog status'. A pull that brings an erase or a trim leaves a \
          purge of the replica's files owed (an LMDB replica's), which the sync then pays, \
          printing 'purged: N bytes scrubbed'. Safe to cut anywhere: the next sync goes on. \
          With --follow, stay in sync live until Ctrl-C or SIGTERM. With --remote URL, sync with \
          the log at its new address, kept once it is found to hold the replica's log. A sync \
          gives up on a remote after --timeout seconds in all (default 900; each exchange 120 \
          at most). Give the token in MSGLOG_TOKEN rather than --token, which other users see in ps.
          """,
        options: [
          Options.syncFollow, Options.reset, Options.remote, Options.remoteToken, Options.cacert, Options.syncTimeout,
        ],
        shared: [Options.db, Options.json],
        example: "msglog sync\nmsglog sync --follow\nmsglog sync --remote https://chat.example.org")
    case .status:
      return CommandDeclaration(
        name: .status, summary: "show a replica's remote, seq, pending and refused changes",
        overview: """
          Show the replica's remote, its seq and the remote's head when last seen, how many \
          changes are pending (each with --verbose), and the changes the remote refused, which \
          stay listed until --clear.
          """,
        options: [Options.verbose, Options.clear], shared: [Options.db, Options.json],
        example: "msglog status --verbose")
    case .completions:
      return CommandDeclaration(
        name: .completions, summary: "print a shell completion script",
        overview: """
          Print a completion script for bash, zsh or fish: commands, options, and stream names \
          read from the database as you type.
          """,
        arguments: [
          ArgumentDeclaration(
            name: "SHELL", help: "bash, zsh or fish", optional: true, completion: .words(["bash", "zsh", "fish"]))
        ],
        options: [Options.listStreams], shared: [Options.db], tolerated: [Options.stream, Options.json],
        example: "msglog completions bash > ~/.local/share/bash-completion/completions/msglog")
    case .help:
      return CommandDeclaration(
        name: .help, summary: "show help for msglog or a command",
        overview: "Show the overview of msglog, or the help page of COMMAND.",
        arguments: [
          ArgumentDeclaration(
            name: "COMMAND", help: "a command name", optional: true,
            completion: .words(CommandName.allCases.map(\.rawValue)))
        ],
        options: [Options.man], shared: [], tolerated: Options.shared,
        example: "msglog help move\nmsglog help --man > msglog.1 && man ./msglog.1")
    case .erase: return erase
    case .purge: return purge
    case .trim: return trim
    }
  }

  /// In the order of `msglog --help`.
  static var ordered: [CommandDeclaration] { CommandName.allCases.map(declaration) }

  /// Every option any command takes, once each.
  static var everyOption: [OptionDeclaration] {
    var seen: Set<String> = []
    return (Options.shared + Options.meta + ordered.flatMap(\.options)).filter { seen.insert($0.name).inserted }
  }
}
