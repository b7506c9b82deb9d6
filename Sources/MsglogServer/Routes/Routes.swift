import Msglog

/// The routes, declared once: the page's files, the health checks and
/// metrics, and the API, each answering in the shapes `--json` prints. The
/// router dispatches from this table; docs/REFERENCE.md's route list and
/// the OpenAPI document are written from it.
struct Routes: Sendable {
  let log: EventLog
  let commits: CommitHub
  /// A past list (`at`) and a diff are replayed (their orders, not their
  /// texts): only this many at once, so that many clients cannot take every
  /// worker and core with replays while writes wait.
  let replays = Permits(4)
  /// How long a streamed answer waits for a client that takes nothing.
  let stallLimit: Double
  /// What `/metrics` shows; nil with `--no-metrics`.
  let metrics: Metrics?
  let readiness: Readiness
  /// Who may come in: a follow opened without a token asks it, while it
  /// waits, whether the log has come to hold tokens since.
  let gate: TokenGate
  /// Where a follow cut by a failure says why.
  let warnings: ServerLog

  static func table(
    log: EventLog, commits: CommitHub, stallLimit: Double, metrics: Metrics?, readiness: Readiness, gate: TokenGate,
    warnings: ServerLog
  ) -> [Route] {
    let api = Routes(
      log: log, commits: commits, stallLimit: stallLimit, metrics: metrics, readiness: readiness, gate: gate,
      warnings: warnings)
    let document = OpenAPIDocument()
    var routes =
      Page.routes + api.operations(document) + api.reads + api.writes + eraseRoutes(api) + syncRoutes(api)
    // The page reads `/?stream=S&view=chat|board` itself.
    if let page = routes.firstIndex(where: { $0.path == "/" }) {
      routes[page].query = [
        .init("stream", .string, "S", "the stream the page opens"),
        .init("view", .string, "VIEW", "chat or board"),
      ]
      routes[page].parameters = ["stream", "view"]
    }
    document.set(OpenAPI.document(routes))
    return routes
  }

  // MARK: - Operating the server

  private func operations(_ document: OpenAPIDocument) -> [Route] {
    var routes = [
      Route(
        .get, "/livez", needsToken: false,
        success: .init(#"`{"status":"ok"}` while the process serves"#)
      ) { _ in
        .json {
          $0.object {
            $0.key("status"); $0.value("ok")
          }
        }
      },
      Route(
        .get, "/readyz", needsToken: false,
        success: .init(
          #"`{"status":"ok"}` when a read of the store answered within 1 s (with `"replica":true` on a PostgreSQL standby); else 503 `{"status":"unavailable","error":"…"}`"#
        )
      ) { _ in readyz() },
    ]
    if let metrics {
      let commits = self.commits
      let figures = StoreFigures(log: log)
      routes.append(
        Route(
          .get, "/metrics", needsToken: true, permission: .anyToken,
          success: .init(200, "text/plain; version=0.0.4; charset=utf-8", .text, "Prometheus text format 0.0.4")
        ) { _ in
          // A store that does not answer within a second: the last figures read.
          let read = figures.read()
          let text = metrics.exposition(
            headSeq: max(read.head ?? 0, commits.head), syncBookkeeping: read.sync, process: .now())
          return Response(contentType: "text/plain; version=0.0.4; charset=utf-8", body: .bytes(Array(text.utf8)))
        })
    }
    routes.append(
      Route(
        .get, "/api/openapi.json", needsToken: true, permission: .anyToken,
        success: .init("this table as an OpenAPI 3.1 document")
      ) { _ in Response(contentType: "application/json", body: .bytes(document.bytes)) })
    routes.append(
      Route(
        .get, "/api/whoami", needsToken: true, permission: .anyToken,
        query: [.init("stream", .string, "S", "also the token's rights on this stream")],
        success: .init(
          #"`{"name":"ann"}`: the named token's name, the sender of what it writes; `{"name":null}` for the operator's token or none; "#
            + #"with `stream`, also `"stream":S,"may":["read","write","erase"]`, the rights it has there (every one for the operator's token or none)"#
        )
      ) { request in try whoami(request.caller, on: request.onlyStream()) })
    return routes
  }

  /// Who the request's token is, for the page to show ("signed in as
  /// ann") and to write as: only the name, never a pattern or a secret;
  /// with a stream, what the token may do there (the page offers "Delete
  /// for everyone" only where it may erase).
  func whoami(_ caller: Caller, on stream: StreamName?) -> Response {
    .json { json in
      json.object {
        $0.key("name")
        if let name = caller.name { $0.value(name) } else { $0.null() }
        guard let stream else { return }
        $0.member("stream", stream)
        $0.key("may")
        $0.array { json in
          for right in TokenScopes.Right.allCases where caller.may(right, stream) { json.value(right.rawValue) }
        }
      }
    }
  }

  func readyz() -> Response {
    switch readiness.check() {
    case .ready(let replica):
      return .json { json in
        json.object {
          $0.key("status")
          $0.value("ok")
          if replica {
            // A standby answers reads, also once its primary is gone; it takes no writes.
            $0.key("replica")
            $0.value(true)
          }
        }
      }
    case .unavailable(let reason):
      return .json(status: 503) { json in
        json.object {
          $0.key("status")
          $0.value("unavailable")
          $0.key("error")
          $0.value(reason)
        }
      }
    }
  }

  // MARK: - Reading

  private var reads: [Route] {
    let stream = Route.Field("stream", .string, "S", "the stream (default: main)")
    return [
      Route(
        .get, "/api/streams", needsToken: true, permission: .anyToken, success: .init("`streams --json`")
      ) { try streams($0) },
      Route(
        .get, "/api/items", needsToken: true, permission: .stream(.read, .query),
        query: [stream, .init("at", .integer, "SEQ", "the list as it was after this event (`replay --at`)")],
        success: .init("`list --json` (404 for a stream with no events); with `at`, `replay --json --at SEQ`"),
        refusals: [404, 410]
      ) { try items($0) },
      Route(
        .get, "/api/events", needsToken: true, permission: .stream(.read, .queryOrFiltered),
        query: [
          .init("from", .integer, "SEQ", "the first seq (default 1)"),
          .init("limit", .integer, "N", range: 1...100_000, "at most this many events (default 1000)"),
          .init("stream", .string, "S", "only this stream's events (default: every stream)"),
        ],
        success: .init(
          200, "application/x-ndjson", .text,
          "`log --json` lines (`application/x-ndjson`; limit 1–100000, default 1000; every stream without `stream`)"),
        refusals: [404, 410]
      ) { try events($0) },
      Route(
        .get, "/api/diff", needsToken: true, permission: .stream(.read, .query),
        query: [
          stream, .init("from", .integer, "A", required: true, "the earlier seq"),
          .init("to", .integer, "B", required: true, "the later seq"),
        ],
        success: .init("`diff --json A B`"), refusals: [404, 410]
      ) { try diff($0) },
      Route(
        .get, "/api/follow", needsToken: true, permission: .stream(.read, .queryOrFiltered),
        query: [
          .init("stream", .string, "S", "only this stream's events (default: every stream)"),
          .init("from", .integer, "SEQ", "the first seq (default: only new events)"),
        ],
        headerFields: [
          .init("Last-Event-ID", .integer, "SEQ", "resume after this seq (sent by a reconnecting EventSource)")
        ],
        success: .init(
          200, "text/event-stream", .events,
          "`text/event-stream`: per event `id: SEQ` and `data: ` the `log --json` object; from `Last-Event-ID` + 1 "
            + "when the header is sent, else from SEQ, else only new events (a stream with no events yet: from the "
            + "head, whatever is asked); a `: keep-alive` comment every 15 s"),
        refusals: [404, 410]
      ) { try follow($0) },
    ]
  }

  // MARK: - Writing

  /// The write routes, one per declared operation (`WriteOperation`): the
  /// body's members and their types are read from its declaration, so the
  /// route list and the OpenAPI document say what the one decoder reads.
  private var writes: [Route] {
    let answers: [WriteOperation: String] = [
      .append: "`append --json`",
      .insert: "`insert --json`",
      .move: #"`move --json`, or `{"moved":false}` for a move onto itself"#,
      .remove: "`remove --json` (`id`: a UUID or a prefix of 8+)",
      .edit: #"`edit --json`, or `{"edited":false}` for the same text"#,
      .restore: "`restore --json` (without `index`: after its predecessor)",
      .undo: #"`undo --json` (without `seq`: the latest undoable event), or `{"undone":false}`"#,
    ]
    // In the order the route list has always shown them.
    let operations: [WriteOperation] = [.append, .insert, .move, .remove, .edit, .restore, .undo]
    return operations.map { operation in
      Route(
        .post, "/api/\(operation.name)", needsToken: true, permission: .stream(.write, .body),
        body: Self.bodyFields(operation),
        success: .init(answers[operation]!), refusals: [404, 409, 412]
      ) { try write($0, operation, $1) }
    }
  }

  /// A write route's body members: the stream, the operation's own members
  /// (from its declaration), `expectVersion`, and `rebase` where it rebases.
  static func bodyFields(_ operation: WriteOperation) -> [Route.Field] {
    var fields = [Route.Field("stream", .string, "the stream (default: main)")]
    for field in operation.declaration.fields {
      fields.append(
        Route.Field(
          field.member.name, Route.Field.Kind(field.value), required: field.required,
          Self.describe(field.member, operation)))
    }
    fields.append(.init("expectVersion", .integer, "refuse (412) unless the stream is at this version"))
    if operation.rebases {
      fields.append(
        .init("rebase", .boolean, "with expectVersion: if the stream moved on, do what was meant at that version"))
    }
    return fields
  }

  /// What a body member is, in the OpenAPI document's words.
  private static func describe(_ member: WriteMember, _ operation: WriteOperation) -> String {
    switch member {
    case .text: "the message (1 byte to 1 MiB of UTF-8)"
    case .sender: "who wrote it (1 byte to 1 KiB)"
    case .id:
      operation == .append || operation == .insert
        ? "the new item's id (default: a new random one)"
        : operation == .move
          ? "the id of the item at `from`, when given (a check)" : "the item: its UUID or a prefix of 8+ hex digits"
    case .index:
      operation == .restore ? "where it goes back (default: after its predecessor)" : "where it goes (0: first)"
    case .from: "the item's index"
    case .to: "its new index"
    case .seq: "the event to undo (default: the latest undoable)"
    default: member.name
    }
  }
}

extension Route.Field.Kind {
  /// The type a declared write member's value has.
  init(_ value: WriteOperation.Value) {
    switch value {
    case .text, .sender: self = .text
    case .uuid: self = .uuid
    case .selector: self = .selector
    case .number: self = .integer
    }
  }
}
