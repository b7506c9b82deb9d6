import Foundation
import MsglogLoopback
import MsglogTestSupport
import Testing

/// `msglog serve` with named tokens, on both stores, through the real
/// binaries (SPEC "Who may do what: named tokens"): once the log holds a
/// token every API route wants one, the one 401 for all, 403 naming what
/// is missing with nothing done, the sender is the token's name, a sync
/// push's change to a stream the token may not write is refused as a
/// change, a replica belongs to the token that first pushed for it, and a
/// revoked token is refused from its next request on, without a restart.
@Suite(.serialized) struct NamedTokenServeTests {
  func token(_ s: Sandbox, _ args: [String]) throws -> String {
    let r = s.run(["token", "add"] + args)
    try #require(r.code == 0, "\(r)")
    return r.stdout.trimmingCharacters(in: .newlines)
  }

  /// The sender a named token writes as is its name byte for byte: a
  /// canonically equivalent text ("\u{212A}im", KELVIN SIGN, for "Kim"),
  /// which Swift's `==` took as equal, is refused, not recorded with its
  /// other bytes. A token may not be named `-`, the request log's mark for
  /// no token.
  @Test func theSenderIsTheNameByteForByte() throws {
    let s = Sandbox()
    s.append("x")
    let kim = try token(s, ["Kim", "--write", "*"])
    let dash = s.run(["token", "add", "-", "--write", "*"])
    #expect(dash.code == 64 && dash.stderr.hasPrefix("msglog: invalid token name '-'"), "\(dash)")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let before = s.contents()
    var r = server.request(
      "POST", "/api/append", #"{"text":"y","sender":"\u212aim"}"#, headers: ["Authorization: Bearer \(kim)"])
    #expect(r.status == 403 && r.body.contains("token Kim writes as Kim"), "\(r)")
    #expect(s.contents() == before)
    r = server.request(
      "POST", "/api/append", #"{"text":"y","sender":"Kim"}"#, headers: ["Authorization: Bearer \(kim)"])
    #expect(r.status == 200, "\(r)")
  }

  @Test(arguments: Store.allCases) func scopesSenderAndRevocation(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("board", stream: "team/board")
    s.append("pay rise", stream: "hr/pay")
    let seed = s.append("in main", sender: "eve")
    let ann = try token(s, ["ann", "--write", "team/*"])
    let viewer = try token(s, ["viewer", "--read", "team/*"])
    let server = try ServedLog.running(s, ["--log-format", "json"])
    defer { _ = server.stop() }
    func call(_ method: String, _ path: String, _ body: String? = nil, _ token: String?) -> ServedLog.Reply {
      server.request(method, path, body, headers: token.map { ["Authorization: Bearer \($0)"] } ?? [])
    }
    let needed = #"{"error":"a valid token is needed"}"#
    for token in [nil, "nonsense", "msglog_0123456789abcdef_" + String(repeating: "0", count: 64)] {
      #expect(call("GET", "/api/streams", nil, token).description == "401 " + needed)
      #expect(call("GET", "/metrics", nil, token).status == 401)
    }
    // Reads: only what the token may read.
    var r = call("GET", "/api/streams", nil, viewer)
    #expect(r.status == 200 && r.body.contains("team/board") && !r.body.contains("hr/pay"), "\(r)")
    r = call("GET", "/api/events", nil, viewer)
    #expect(r.status == 200 && r.body.contains("board") && !r.body.contains("pay rise"), "\(r)")
    r = call("GET", "/api/items?stream=hr/pay", nil, viewer)
    #expect(r.description == #"403 {"error":"token viewer may not read stream hr/pay"}"#)
    // Writes: the stream's right, and the sender is the token's name.
    let before = s.contents()
    r = call("POST", "/api/append", #"{"stream":"team/board","text":"x"}"#, viewer)
    #expect(r.description == #"403 {"error":"token viewer may not write stream team/board"}"#)
    r = call("POST", "/api/append", #"{"stream":"hr/pay","text":"x"}"#, ann)
    #expect(r.description == #"403 {"error":"token ann may not write stream hr/pay"}"#)
    // No "stream" is stream main, which ann may not write either.
    r = call("POST", "/api/append", #"{"text":"x"}"#, ann)
    #expect(r.description == #"403 {"error":"token ann may not write stream main"}"#)
    r = call("POST", "/api/move", #"{"from":0,"to":0}"#, ann)
    #expect(r.status == 403 && r.body.contains("may not write stream main"), "\(r)")
    r = call("POST", "/api/erase", #"{"sender":"eve"}"#, ann)
    #expect(r.description == #"403 {"error":"token ann may not erase stream main"}"#)
    r = call("POST", "/api/erase", #"{"ids":["\#(seed)"]}"#, ann)
    #expect(r.description == #"403 {"error":"token ann may not erase stream main"}"#)
    r = call("POST", "/api/append", #"{"stream":"team/board","text":"x","sender":"bob"}"#, ann)
    #expect(r.status == 403 && r.body.contains("token ann writes as ann"), "\(r)")
    #expect(s.contents() == before)
    r = call("POST", "/api/append", #"{"stream":"team/board","text":"from ann"}"#, ann)
    #expect(r.status == 200, "\(r)")
    r = call("POST", "/api/append", #"{"stream":"team/board","text":"signed","sender":"ann"}"#, ann)
    #expect(r.status == 200, "\(r)")
    let list = s.run(["list", "--stream", "team/board"]).lines
    #expect(list.count == 3 && list[1].contains("ann  from ann") && list[2].contains("ann  signed"), "\(list)")
    // Revoked: refused from the next request on, the same 401.
    #expect(s.run(["token", "revoke", "ann"]).code == 0)
    #expect(call("GET", "/api/streams", nil, ann).description == "401 " + needed)
    #expect(call("GET", "/api/streams", nil, viewer).status == 200)
  }

  /// The first `token add` closes a running `serve` to requests without a
  /// token, without a restart, by the time it returns: a tokenless request
  /// does not ask the log again within a quarter second of its last "no
  /// tokens" (on PostgreSQL each ask is a round trip), and `token add`
  /// waits that out for the first token; a request that presents a token
  /// asks at once; a follow opened without a token ends.
  @Test(arguments: Store.allCases) func theFirstTokenClosesARunningServe(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    #expect(server.request("GET", "/api/streams").status == 200)
    // A follow opened without a token, while the log held none.
    let socket = try #require(LoopbackSocket(port: server.port))
    #expect(socket.send("GET /api/follow HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"))
    let opened = socket.receive(seconds: 30) { $0.contains("retry: 1000") }
    #expect(opened.text.contains(" 200 "), "\(opened.text)")
    // Tokenless requests just before: a "no tokens" answer as recent as
    // can be when the token is added.
    #expect(server.request("GET", "/api/streams").status == 200)
    #expect(server.request("POST", "/api/append", #"{"text":"before the first token"}"#).status == 200)
    let ann = try token(s, ["ann", "--read", "*"])
    // Once it has returned, no request without a token is let in: a read
    // (on a worker), a write (decided on the event loop where it can be).
    #expect(server.request("GET", "/api/streams").status == 401)
    #expect(server.request("POST", "/api/append", #"{"text":"after the first token"}"#).status == 401)
    // The follow ends, with nothing of what is committed since.
    s.append("after the first token")
    let end = socket.receive(seconds: 30) { _ in false }
    #expect(end.closed, "the tokenless follow went on: \(end.text)")
    #expect(!end.text.contains("after the first token"), "\(end.text)")
    #expect(server.request("GET", "/api/streams").status == 401)
    #expect(server.request("GET", "/api/streams", headers: ["Authorization: Bearer \(ann)"]).status == 200)
    #expect(server.request("GET", "/api/streams", headers: ["Authorization: Bearer nonsense"]).status == 401)
  }

  /// `GET /api/whoami` tells a token whose it is (the page's "signed in as
  /// ann"): a named token's name whatever its scopes, null for tokenless
  /// localhost and for the operator's token; the one 401 without a token
  /// once the log holds one, and for a revoked one, without a restart.
  @Test(arguments: Store.allCases) func whoamiNamesTheToken(_ store: Store) throws {
    let s = Sandbox(store)
    s.append("seed")
    func whoami(_ server: ServedLog, _ token: String?, _ query: String = "") -> String {
      server.request("GET", "/api/whoami" + query, headers: token.map { ["Authorization: Bearer \($0)"] } ?? [])
        .description
    }
    let open = try ServedLog.running(s)
    #expect(whoami(open, nil) == #"200 {"name":null}"#)
    // With a stream, what the token may do there: the page offers "Delete for everyone" only with "erase".
    let every = #""may":["read","write","erase"]}"#
    #expect(whoami(open, nil, "?stream=team%2Fa") == #"200 {"name":null,"stream":"team/a","# + every)
    let ann = try token(s, ["ann", "--write", "*"])
    let viewer = try token(s, ["viewer", "--read", "team/*"])
    let mod = try token(s, ["mod", "--erase", "team/*", "--read", "*"])
    #expect(whoami(open, ann) == #"200 {"name":"ann"}"#)
    #expect(whoami(open, viewer) == #"200 {"name":"viewer"}"#)
    #expect(whoami(open, nil) == #"401 {"error":"a valid token is needed"}"#)
    #expect(whoami(open, ann, "?stream=team%2Fa") == #"200 {"name":"ann","stream":"team/a","may":["read","write"]}"#)
    #expect(whoami(open, viewer, "?stream=team%2Fa") == #"200 {"name":"viewer","stream":"team/a","may":["read"]}"#)
    #expect(whoami(open, viewer, "?stream=hr") == #"200 {"name":"viewer","stream":"hr","may":[]}"#)
    #expect(whoami(open, mod, "?stream=team%2Fa") == #"200 {"name":"mod","stream":"team/a","# + every)
    #expect(whoami(open, mod, "?stream=main") == #"200 {"name":"mod","stream":"main","may":["read"]}"#)
    #expect(whoami(open, mod, "?stream=%0A").hasPrefix("400 "))
    _ = open.stop()
    let server = try ServedLog.running(s, environment: ["MSGLOG_TOKEN": "operator-secret-0123456789"])
    defer { _ = server.stop() }
    #expect(whoami(server, "operator-secret-0123456789") == #"200 {"name":null}"#)
    #expect(
      whoami(server, "operator-secret-0123456789", "?stream=hr") == #"200 {"name":null,"stream":"hr","# + every)
    #expect(whoami(server, ann) == #"200 {"name":"ann"}"#)
    #expect(s.run(["token", "revoke", "ann"]).code == 0)
    #expect(whoami(server, ann) == #"401 {"error":"a valid token is needed"}"#)
  }

  /// A log with named tokens may be served beyond localhost without the
  /// operator's token: every request wants one of them anyway.
  @Test func namedTokensLetItListenBeyondLocalhost() throws {
    let s = Sandbox()
    s.append("seed")
    let refused = s.run(["serve", "--listen", "0.0.0.0:0"])
    #expect(refused.code == 64 && refused.stderr.contains("so it needs a token"), "\(refused)")
    let ann = try token(s, ["ann", "--read", "*"])
    let server = try ServedLog.running(s, listen: "0.0.0.0:0")
    defer { _ = server.stop() }
    #expect(server.request("GET", "/api/streams").status == 401)
    #expect(server.request("GET", "/api/streams", headers: ["Authorization: Bearer \(ann)"]).status == 200)
  }

  /// A stream the token may not read does not exist for it, in refusals
  /// too: an undo or a restore aimed at another stream's event or item is
  /// told there is none in its own stream, where a token that may read
  /// that stream is told where it is. (The refusals named it, so a write
  /// token could map every event and item to its stream.)
  @Test func aRefusalNamesNoStreamTheTokenMayNotRead() throws {
    let s = Sandbox()
    let pay = s.append("salary", stream: "hr/pay")  // seq 1
    #expect(s.run("remove", "--stream", "hr/pay", pay).code == 0)
    s.append("board", stream: "team/board")
    let ann = try token(s, ["ann", "--write", "team/*", "--read", "team/*"])
    let boss = try token(s, ["boss", "--read", "*", "--write", "team/*"])
    let server = try ServedLog.running(s)
    defer { _ = server.stop() }
    let before = s.contents()
    for (path, body, hidden, told) in [
      (
        "/api/undo", #"{"stream":"team/board","seq":1}"#, "event 1 is not in stream 'team/board'",
        "event 1 is in stream 'hr/pay'"
      ),
      (
        "/api/restore", #"{"stream":"team/board","id":"\#(pay)"}"#, "no item with id \(pay) in stream 'team/board'",
        "item \(pay) is in stream 'hr/pay'"
      ),
    ] {
      let refused = server.request("POST", path, body, headers: ["Authorization: Bearer \(ann)"])
      #expect(refused.status == 404 && refused.body.contains(hidden), "\(path): \(refused)")
      #expect(!refused.body.contains("hr/pay"), "\(path): \(refused)")
      let reader = server.request("POST", path, body, headers: ["Authorization: Bearer \(boss)"])
      #expect(reader.status == 404 && reader.body.contains(told), "\(path): \(reader)")
    }
    // An id taken in a stream the token may not read: taken, but not
    // where or when (the seq of an insert in hr/pay was told).
    let append = #"{"stream":"team/board","id":"\#(pay)","text":"x"}"#
    let taken = server.request("POST", "/api/append", append, headers: ["Authorization: Bearer \(ann)"])
    #expect(taken.status == 409 && taken.body.contains("id \(pay) was already used\""), "\(taken)")
    let reader = server.request("POST", "/api/append", append, headers: ["Authorization: Bearer \(boss)"])
    #expect(reader.status == 409 && reader.body.contains("was already used (inserted at seq 1)"), "\(reader)")
    #expect(s.contents() == before)
    // A trim drops the insert: which stream it was in is known no more,
    // and its seq is told to no named token.
    #expect(s.run("trim", "--before", "3").code == 0)
    let trimmed = server.request("POST", "/api/append", append, headers: ["Authorization: Bearer \(ann)"])
    #expect(trimmed.status == 409 && trimmed.body.contains("id \(pay) was already used\""), "\(trimmed)")
  }

  /// Sync through a named token: `clone` needs read on every stream, a
  /// change to a stream the token may not write is refused as a change
  /// (the others apply, sent as the token's name), and the replica is the
  /// token's: another token's push for it is refused, its progress untouched.
  @Test(arguments: Store.allCases) func aReplicaBelongsToItsToken(_ store: Store) throws {
    let remote = Sandbox(store)
    remote.append("board", stream: "team/board")
    let narrow = try token(remote, ["narrow", "--read", "team/*"])
    let ann = try token(remote, ["ann", "--read", "*", "--write", "team/*"])
    let bob = try token(remote, ["bob", "--write", "*"])
    let server = try ServedLog.running(remote)
    defer { _ = server.stop() }
    let url = try #require(server.url)
    let refused = Sandbox()
    let cut = refused.run(["clone", url], environment: ["MSGLOG_TOKEN": narrow])
    #expect(cut.code != 0 && cut.stderr.contains("token narrow may not read every stream"), "\(cut)")
    // Its hint names no right it lacks (it named writing, where reading was).
    #expect(cut.stderr.contains("hint: the remote's operator decides who may do what (the token's rights"), "\(cut)")
    let replica = Sandbox()
    let clone = replica.run(["clone", url], environment: ["MSGLOG_TOKEN": ann])
    #expect(clone.code == 0, "\(clone)")
    #expect(replica.run(["append", "--stream", "team/board", "--sender", "mallory", "mine"]).code == 0)
    #expect(replica.run(["append", "--stream", "hr/pay", "theirs"]).code == 0)
    let synced = replica.run(["sync"], environment: ["MSGLOG_TOKEN": ann])
    #expect(synced.stderr.contains("token ann may not write stream hr/pay"), "\(synced)")
    let board = remote.run(["list", "--stream", "team/board"]).lines
    #expect(board.count == 2 && board[1].contains("ann  mine"), "\(board)")
    #expect(remote.run(["list", "--stream", "hr/pay"]).stdout.isEmpty)
    // Bob may write everything, but the replica is ann's.
    #expect(replica.run(["append", "--stream", "team/board", "later"]).code == 0)
    // Bob's last use recorded first (a write, now and then), so that what follows changes nothing.
    #expect(server.request("GET", "/api/streams", headers: ["Authorization: Bearer \(bob)"]).status == 200)
    let before = remote.contents()
    let stolen = replica.run(["sync"], environment: ["MSGLOG_TOKEN": bob])
    #expect(stolen.code != 0 && stolen.stderr.contains("is pushed for by another token than bob"), "\(stolen)")
    #expect(remote.contents() == before)
    let again = replica.run(["sync"], environment: ["MSGLOG_TOKEN": ann])
    #expect(again.code == 0, "\(again)")
    #expect(remote.run(["list", "--stream", "team/board"]).lines.count == 3)
    // A token that may write no stream cannot push at all, and nothing of
    // its push is kept (pushes under ever new replica ids, each change
    // refused, had the log keep every refusal: a rightless token filling
    // the disk).
    let reader = try token(remote, ["reader", "--read", "*"])
    let readOnly = Sandbox()
    #expect(readOnly.run(["clone", url], environment: ["MSGLOG_TOKEN": reader]).code == 0)
    #expect(readOnly.run(["append", "--stream", "team/board", "not mine to push"]).code == 0)
    let kept = remote.contents()
    let pushed = readOnly.run(["sync"], environment: ["MSGLOG_TOKEN": reader])
    #expect(pushed.code == 1 && pushed.stderr.contains("token reader may not write any stream"), "\(pushed)")
    #expect(remote.contents() == kept)
    // What the replica still learns: aReadOnlyReplicaLearnsEraseAndTrim.
  }

  /// A replica whose token may only read, with a change pending, learns an
  /// erase and a trim all the same: the push is refused whole, the pull
  /// goes on, the sync fails with the refusal. Both ways a sync pulls: a
  /// replica at the seq before the new horizon learns the trim itself; one
  /// behind it starts again from the bases (a review found that way still
  /// pushed first and stopped). Their files hold the erased text no more
  /// once purged, and their change stays pending.
  @Test(arguments: Store.allCases) func aReadOnlyReplicaLearnsEraseAndTrim(_ store: Store) throws {
    let remote = Sandbox(store)
    let secret = remote.append("SENTINEL-ERASED-FOR-EVERYONE", stream: "board")
    let reader = try token(remote, ["reader", "--read", "*"])
    let server = try ServedLog.running(remote)
    defer { _ = server.stop() }
    let url = try #require(server.url)
    let near = Sandbox()
    let behind = Sandbox()
    for replica in [near, behind] {
      #expect(replica.run(["clone", url], environment: ["MSGLOG_TOKEN": reader]).code == 0)
      #expect(replica.run(["append", "--stream", "board", "not mine to push"]).code == 0)
    }
    for text in ["two", "three", "four"] { _ = remote.append(text, stream: "board") }
    // `near` pulls to the head (refused, exit 1); the trim leaves it at the
    // seq before the horizon and `behind` three seqs behind that.
    #expect(near.run(["sync"], environment: ["MSGLOG_TOKEN": reader]).code == 1)
    #expect(remote.run(["trim", "--before", "4"]).code == 0)
    #expect(remote.run(["erase", "--stream", "board", secret, "--purge"]).code == 0)
    let kept = remote.contents()
    for replica in [near, behind] {
      let r = replica.run(["sync"], environment: ["MSGLOG_TOKEN": reader])
      #expect(r.code == 1 && r.stderr.contains("refused this replica's changes: token reader may not write"), "\(r)")
      #expect(r.stderr.contains("hint: what the remote holds was pulled all the same"), "\(r)")
      #expect(replica.export() == remote.export())
      #expect(replica.run(["status"]).stdout.contains("pending  1\n"), "\(replica.run(["status"]))")
      // Purged by the sync itself, whose push was refused: what it pulled is forgotten all the same.
      let holding = filesHolding("SENTINEL", in: replica.db)
      #expect(holding.isEmpty, "\(holding) still hold the erased text")
      let list = replica.run(["list", "--stream", "board"]).stdout
      #expect(list.contains("not mine to push") && !list.contains("SENTINEL"), "\(list)")
      #expect(replica.run(["verify"]).code == 0)
    }
    #expect(remote.contents() == kept)
  }

  /// An undo through a named token is sent as its name, as any write is:
  /// the edit that undoes an edit names the token (who edited back), not
  /// the earlier editor whose words it brings back and not no one; a body
  /// naming another sender is refused, nothing done. A replica's pending
  /// undo pushed through the token is sent as its name too, whatever
  /// sender its user gave it (`undo --sender`).
  @Test(arguments: Store.allCases) func anUndoIsSentAsTheTokensName(_ store: Store) throws {
    let remote = Sandbox(store)
    let card = remote.append("card", sender: "eve", stream: "team/board")
    #expect(remote.run(["edit", "--stream", "team/board", "--sender", "eve", card, "card, by eve"]).code == 0)
    let ann = try token(remote, ["ann", "--read", "*", "--write", "team/*"])
    let server = try ServedLog.running(remote)
    defer { _ = server.stop() }
    func undo(_ body: String) -> ServedLog.Reply {
      server.request("POST", "/api/undo", body, headers: ["Authorization: Bearer \(ann)"])
    }
    let before = remote.contents()
    var r = undo(#"{"stream":"team/board","sender":"eve"}"#)
    #expect(r.status == 403 && r.body.contains("token ann writes as ann"), "\(r)")
    #expect(remote.contents() == before)
    r = undo(#"{"stream":"team/board"}"#)
    #expect(r.status == 200 && r.body.contains(#""undoes":2"#), "\(r)")
    let undone = remote.run(["log", "--stream", "team/board", "--json"]).lines.last ?? ""
    #expect(undone.contains(#""op":"edit""#) && undone.contains(#""text":"card""#), "\(undone)")
    #expect(undone.contains(#""sender":"ann""#), "\(undone)")

    // Through sync: a replica's undo of an edit, pushed with ann's token.
    let replica = Sandbox()
    #expect(replica.run(["clone", server.url!], environment: ["MSGLOG_TOKEN": ann]).code == 0)
    #expect(replica.run(["undo", "--stream", "team/board", "--sender", "mallory", "3"]).code == 0)  // redoes eve's edit
    let pending = replica.run(["log", "--stream", "team/board", "--json"]).lines.last ?? ""
    #expect(pending.contains(#""sender":"mallory""#) && pending.contains(#""text":"card, by eve""#), "\(pending)")
    let synced = replica.run(["sync"], environment: ["MSGLOG_TOKEN": ann])
    #expect(synced.code == 0, "\(synced)")
    let pushed = remote.run(["log", "--stream", "team/board", "--json"]).lines.last ?? ""
    #expect(pushed.contains(#""text":"card, by eve""#) && pushed.contains(#""sender":"ann""#), "\(pushed)")
    #expect(replica.export() == remote.export())
    #expect(remote.run(["verify"]).code == 0)

    // The sync bookkeeping is the whole log's: shown to a token that may
    // read every stream (ann), as a pull does, not to one that may read some.
    let viewer = try token(remote, ["viewer", "--read", "team/*"])
    func streams(_ token: String) -> ServedLog.Reply {
      server.request("GET", "/api/streams", headers: ["Authorization: Bearer \(token)"])
    }
    r = streams(ann)
    #expect(r.status == 200 && r.body.contains(#""sync":{"replicas":1,"#), "\(r)")
    r = streams(viewer)
    #expect(r.status == 200 && r.body.contains("team/board") && !r.body.contains(#""sync""#), "\(r)")
  }

  /// The request log names the token, never its secret, and the reason of
  /// each refusal; more than 20 failed tokens from one address within a
  /// minute get that address 429 with Retry-After — another address is
  /// served as before — and the metrics count refusals by reason.
  @Test func failuresAreLoggedSlowedAndCounted() throws {
    let s = Sandbox()
    s.append("seed")
    let ann = try token(s, ["ann", "--read", "*"])
    let server = try ServedLog.running(s, ["--log-format", "json"])
    let bearer = ["Authorization: Bearer \(ann)"]
    #expect(server.request("GET", "/api/streams", headers: bearer).status == 200)
    let wrong = "msglog_" + ann.dropFirst(7).prefix(16) + "_" + String(repeating: "1", count: 64)
    for _ in 0..<21 {
      #expect(server.request("GET", "/api/streams", headers: ["Authorization: Bearer \(wrong)"]).status == 401)
    }
    let throttled = server.request("GET", "/api/streams", headers: bearer)
    #expect(throttled.status == 429 && throttled.body.contains("too many failed tokens"), "\(throttled)")
    let raw = try #require(LoopbackSocket(port: server.port))
    #expect(raw.send("GET /api/streams HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ann)\r\n\r\n"))
    let statusLine = raw.receive(seconds: 30).text.components(separatedBy: "\r\n")[0]
    #expect(statusLine == "HTTP/1.1 429 Too Many Requests", "\(statusLine)")
    // Another address is not locked out.
    let other = try #require(LoopbackSocket(port: server.port, from: "127.0.0.2"))
    #expect(other.send("GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(ann)\r\n\r\n"))
    let metrics = other.receive(seconds: 30).text
    #expect(metrics.contains(" 200 "), "\(metrics)")
    #expect(metrics.contains(#"msglog_refusals_total{reason="unknown"} 21"#), "\(metrics)")
    #expect(metrics.contains(#"msglog_refusals_total{reason="throttled"} 2"#), "\(metrics)")
    let run = server.stop()
    let lines = run.stderr.split(separator: "\n").filter { $0.hasPrefix("{\"time\"") && $0.contains("\"path\"") }
    #expect(!run.stderr.contains(String(ann.suffix(64))) && !run.stderr.contains(String(wrong.suffix(64))))
    #expect(lines.first?.contains(#""token":"ann""#) == true, "\(lines)")
    #expect(lines.filter { $0.contains(#""status":401"#) && $0.contains(#""refused":"unknown""#) }.count == 21)
    #expect(lines.contains { $0.contains(#""status":429"#) && $0.contains(#""refused":"throttled""#) }, "\(lines)")
  }

  /// The page's checks of a link's token before anyone agreed to it
  /// (`GET /api/whoami` with `X-Msglog-Offer: 1`) have a budget of their
  /// own: a page the browser opens can send tabs to link after link with
  /// made-up tokens, from every name of the server (127.0.0.1, localhost),
  /// and counted as failed tokens they turned the address away, every
  /// named token of the machine with it. More than 5 failed a minute get
  /// such checks 429; the address's tokens are served as before.
  @Test func offerChecksHaveABudgetOfTheirOwn() throws {
    let s = Sandbox()
    s.append("seed")
    let ann = try token(s, ["ann", "--read", "*"])
    let server = try ServedLog.running(s, ["--log-format", "json"])
    defer { _ = server.stop() }
    var statuses: [Int] = []
    for n in 0..<30 {
      let made = "made-up-token-\(n)"
      statuses.append(
        server.request("GET", "/api/whoami", headers: ["Authorization: Bearer \(made)", "X-Msglog-Offer: 1"]).status)
    }
    #expect(statuses == Array(repeating: 401, count: 6) + Array(repeating: 429, count: 24), "\(statuses)")
    let bearer = ["Authorization: Bearer \(ann)"]
    #expect(server.request("GET", "/api/streams", headers: bearer).status == 200, "the address was turned away")
    #expect(server.request("GET", "/api/whoami", headers: bearer).status == 200)
    // Past its budget, even a good token's offer check waits: the page then offers it unchecked.
    let offered = server.request("GET", "/api/whoami", headers: bearer + ["X-Msglog-Offer: 1"])
    #expect(offered.status == 429, "\(offered)")
    // The header counts only on whoami: elsewhere a failed token is a failed token.
    for _ in 0..<21 {
      let r = server.request("GET", "/api/streams", headers: ["Authorization: Bearer wrong", "X-Msglog-Offer: 1"])
      #expect(r.status == 401, "\(r)")
    }
    #expect(server.request("GET", "/api/streams", headers: bearer).status == 429)
  }
}
