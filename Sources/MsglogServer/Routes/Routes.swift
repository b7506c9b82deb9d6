import Msglog

/// The routes, declared once: the page's files and the API, each answering
/// in the shapes `--json` prints. The router dispatches from this table,
/// and docs/REFERENCE.md's route list is written from it.
struct Routes: Sendable {
  let log: EventLog
  let commits: CommitHub
  /// A past list (`at`) and a diff are replayed (their orders, not their
  /// texts): only this many at once, so that many clients cannot take every
  /// worker and core with replays while writes wait.
  let replays = Permits(4)
  /// How long a streamed answer waits for a client that takes nothing.
  let stallLimit: Double

  static func table(log: EventLog, commits: CommitHub, stallLimit: Double) -> [Route] {
    let api = Routes(log: log, commits: commits, stallLimit: stallLimit)
    // The page reads `/?stream=S&view=chat|board` itself.
    let page = Page.routes.map { route in
      var route = route
      if route.path == "/" { route.parameters = ["stream", "view"] }
      return route
    }
    return page + [
      Route(.get, "/api/streams", needsToken: true, answers: "`streams --json`") { _ in try api.streams() },
      Route(
        .get, "/api/items", needsToken: true, takes: "?stream=S&at=SEQ",
        answers: "`list --json` (404 for a stream with no events); with `at`, `replay --json --at SEQ`"
      ) { try api.items($0) },
      Route(
        .get, "/api/events", needsToken: true, takes: "?from=SEQ&limit=N&stream=S",
        answers:
          "`log --json` lines (`application/x-ndjson`; limit 1–100000, default 1000; every stream without `stream`)"
      ) { try api.events($0) },
      Route(
        .get, "/api/diff", needsToken: true, takes: "?stream=S&from=A&to=B", answers: "`diff --json A B`"
      ) { try api.diff($0) },
      Route(
        .get, "/api/follow", needsToken: true, takes: "?stream=S&from=SEQ",
        answers:
          "`text/event-stream`: per event `id: SEQ` and `data: ` the `log --json` object; from `Last-Event-ID` + 1 "
          + "when the header is sent, else from SEQ, else only new events (a stream with no events yet: from the "
          + "head, whatever is asked); a `: keep-alive` comment every 15 s"
      ) { try api.follow($0) },
      Route(
        .post, "/api/append", needsToken: true, takes: body(.append),
        answers: "`append --json`"
      ) { try api.write($0, .append) },
      Route(
        .post, "/api/insert", needsToken: true,
        takes: body(.insert),
        answers: "`insert --json`"
      ) { try api.write($0, .insert) },
      Route(
        .post, "/api/move", needsToken: true, takes: body(.move),
        answers: #"`move --json`, or `{"moved":false}` for a move onto itself"#
      ) { try api.write($0, .move) },
      Route(
        .post, "/api/remove", needsToken: true, takes: body(.remove),
        answers: "`remove --json` (`id`: a UUID or a prefix of 8+)"
      ) { try api.write($0, .remove) },
      Route(
        .post, "/api/edit", needsToken: true, takes: body(.edit),
        answers: #"`edit --json`, or `{"edited":false}` for the same text"#
      ) { try api.write($0, .edit) },
      Route(
        .post, "/api/restore", needsToken: true, takes: body(.restore),
        answers: "`restore --json` (without `index`: after its predecessor)"
      ) { try api.write($0, .restore) },
      Route(
        .post, "/api/undo", needsToken: true, takes: body(.undo),
        answers: #"`undo --json` (without `seq`: the latest undoable event), or `{"undone":false}`"#
      ) { try api.write($0, .undo) },
    ] + syncRoutes(api)
  }
}
