import CLibPQ
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// One connection to a PostgreSQL server, used by one thread at a time
/// (a store's pool hands it from thread to thread, never to two at once).
final class Connection: @unchecked Sendable {
  let handle: OpaquePointer

  /// Statements this session has prepared, by their SQL: msglog's SQL is a
  /// few dozen constant strings, and a prepared one skips the server's parse
  /// and plan (a third of a small write's server time).
  private var prepared: [String: String] = [:]
  private var preparedNames = 0
  private static let preparedLimit = 64

  /// Connects with libpq's connection string or URI; libpq's environment
  /// variables (PGHOST, PGUSER, PGPASSWORD, PGSERVICE, PGSSLMODE, …) fill in
  /// what it leaves out.
  init(_ conninfo: String) throws(PostgresError) {
    try LibPQ.load()
    guard let handle = PQconnectStart(conninfo) else {
      throw PostgresError(sqlState: nil, message: "out of memory")
    }
    // libpq prints the server's notices and warnings ("terminating
    // connection due to immediate shutdown") on stderr by default, even
    // while connecting; msglog speaks for itself, in one line.
    PQsetNoticeProcessor(handle, { _, _ in }, nil)
    if let failure = Connection.finishConnecting(handle) {
      PQfinish(handle)
      throw PostgresError(sqlState: nil, message: failure)
    }
    self.handle = handle
  }

  deinit { PQfinish(handle) }

  /// Drives a connection started with PQconnectStart to the end, waiting
  /// on its socket as libpq asks. libpq leaves `connect_timeout` to the
  /// caller on this path: it bounds the whole attempt here.
  /// - Returns: nil once connected, else why not.
  private static func finishConnecting(_ handle: OpaquePointer) -> String? {
    guard PQstatus(handle) != CONNECTION_BAD else { return message(handle) }
    let seconds = connectTimeout(handle)
    let deadline = ContinuousClock.now + .seconds(seconds)
    var status = PGRES_POLLING_WRITING
    while true {
      switch status {
      case PGRES_POLLING_OK: return nil
      case PGRES_POLLING_FAILED: return message(handle)
      default:
        var fd = pollfd(
          fd: PQsocket(handle), events: Int16(status == PGRES_POLLING_READING ? POLLIN : POLLOUT), revents: 0)
        let left = deadline - ContinuousClock.now
        guard left > .zero else {
          return "timeout expired: no answer within \(seconds) s (connect_timeout=\(seconds))"
        }
        let wait = Int32(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
        let ready = poll(&fd, 1, wait)
        if ready < 0 && errno != EINTR { return "poll: \(String(cString: strerror(errno)))" }
        if ready == 0 { continue }  // the deadline, checked above
        status = PQconnectPoll(handle)
      }
    }
  }

  /// How long a connection attempt may take when neither the URL, the
  /// environment (PGCONNECT_TIMEOUT) nor a service file says: libpq would
  /// wait for ever on a server that accepts and never answers.
  static let defaultConnectTimeout: Int64 = 10

  /// The `connect_timeout` in effect (URL, environment or service), else the default.
  private static func connectTimeout(_ handle: OpaquePointer) -> Int64 {
    guard let options = PQconninfo(handle) else { return defaultConnectTimeout }
    defer { PQconninfoFree(options) }
    var option = options
    while let keyword = option.pointee.keyword {
      // 0 (or less) means "wait for ever" to libpq; msglog keeps its default.
      if strcmp(keyword, "connect_timeout") == 0, let value = option.pointee.val,
        let seconds = Int64(String(cString: value)), seconds > 0
      {
        return max(seconds, 2)  // as libpq: below 2 s means 2 s
      }
      option += 1
    }
    return defaultConnectTimeout
  }

  /// Whether the connection can no longer be used.
  var isBroken: Bool { PQstatus(handle) != CONNECTION_OK }

  /// Whether the connection is at rest: connected, out of pipeline mode,
  /// no command in progress and outside any transaction — the only state
  /// in which a pool may hand it to the next user. (A connection left in a
  /// failed transaction would fail every statement it is given.)
  var isIdle: Bool {
    !isBroken && PQpipelineStatus(handle) == PQ_PIPELINE_OFF && PQtransactionStatus(handle) == PQTRANS_IDLE
  }

  /// Whether a transaction is open on it (in progress, or failed and waiting for ROLLBACK).
  var isInTransaction: Bool {
    let status = PQtransactionStatus(handle)
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
  }

  var socket: Int32 { PQsocket(handle) }

  /// Whether a connection that sat at rest in a pool has been closed by
  /// the server meanwhile (a restart, `idle_session_timeout`, a terminated
  /// backend): a server says why before it closes, so anything to read on
  /// an idle connection means it is going or gone. A poll without waiting:
  /// no round trip.
  var hasGoneStale: Bool {
    if isBroken { return true }
    var fd = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
    return poll(&fd, 1, 0) != 0
  }

  /// libpq's last message, on one line.
  static func message(_ handle: OpaquePointer) -> String {
    let text = PQerrorMessage(handle).map { String(cString: $0) } ?? "unknown error"
    return oneLine(text)
  }

  static func oneLine(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).map { $0.trimmingPrefix(while: \.isWhitespace) }
      .filter { !$0.isEmpty }.joined(separator: "; ")
  }

  /// The error a failed result carries.
  func error(of result: OpaquePointer?) -> PostgresError {
    guard let result else { return PostgresError(sqlState: nil, message: Connection.message(handle)) }
    let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
    let primary = PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
    return PostgresError(
      sqlState: state, message: primary.map(Connection.oneLine) ?? Connection.message(handle))
  }

  /// Runs one statement and waits for its rows.
  @discardableResult
  func execute(_ sql: String, _ parameters: [Parameter] = []) throws(PostgresError) -> Rows {
    if let name = try preparedName(sql, parameters) {
      let result = withParameters(parameters) { _, values, lengths, formats in
        PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 1)
      }
      return try check(result)
    }
    let result = withParameters(parameters) { types, values, lengths, formats in
      PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
    }
    return try check(result)
  }

  /// Whether a statement is worth preparing: a query with parameters, or a
  /// `SELECT` (a write's opening reads the head with a join, planned once
  /// then) — not BEGIN, COMMIT or the schema's DDL, which are run once or
  /// cost nothing to parse.
  private func preparable(_ sql: String, _ parameters: [Parameter]) -> Bool {
    (!parameters.isEmpty || sql.hasPrefix("SELECT")) && prepared.count < Connection.preparedLimit
  }

  /// The name `sql` is prepared under, preparing it first (outside a pipeline).
  private func preparedName(_ sql: String, _ parameters: [Parameter]) throws(PostgresError) -> String? {
    if let name = prepared[sql] { return name }
    guard preparable(sql, parameters) else { return nil }
    let name = "msglog_\(preparedNames)"
    preparedNames += 1
    let types = parameters.map(\.type)
    _ = try check(PQprepare(handle, name, sql, Int32(types.count), types))
    prepared[sql] = name
    return name
  }

  /// Sends every statement at once and reads every result: one round trip.
  /// The first failure is thrown; the statements after it were skipped by
  /// the server (and a transaction they were in is aborted).
  ///
  /// With `early`, the server is asked to send the results up to statement
  /// `early.last` as soon as it has them (a flush request), and
  /// `early.answered` is given them, all successful, before the rest are
  /// read: a write learns that everything but its `COMMIT` is done while
  /// the server still flushes that commit (`Access.commit`). Not called
  /// when one of them failed, or when there is one statement.
  ///
  /// `afterwards` go in the same round trip, after `statements`, and what
  /// they do cannot undo what those did: their answers are not returned,
  /// and their failure (or the connection's, once every one of
  /// `statements` is answered) is not thrown — a commit that is durable
  /// is not reported as failed because a notification after it failed.
  @discardableResult
  func pipeline(
    _ statements: [Statement], early: (last: Int, answered: ([Rows]) -> Void)? = nil,
    afterwards: [Statement] = []
  ) throws(PostgresError) -> [Rows] {
    if statements.count == 1, afterwards.isEmpty {
      let rows = Result { () throws(PostgresError) -> Rows in try execute(statements[0].sql, statements[0].parameters) }
      guard case .failure(var failure) = rows else { return [try rows.get()] }
      failure.statement = 0
      throw failure
    }
    guard PQenterPipelineMode(handle) == 1 else { throw error(of: nil) }
    defer { PQexitPipelineMode(handle) }
    // New statements are prepared in the same pipeline; a name counts as
    // prepared once its own result says so (an aborted pipeline skips it).
    var preparing: [Int: (sql: String, name: String)] = [:]
    for (n, statement) in (statements + afterwards).enumerated() {
      let parameters = statement.parameters
      var name = prepared[statement.sql]
      if name == nil, preparable(statement.sql, parameters),
        prepared.count + preparing.count < Connection.preparedLimit,
        !preparing.values.contains(where: { $0.sql == statement.sql })
      {
        let new = "msglog_\(preparedNames)"
        preparedNames += 1
        let types = parameters.map(\.type)
        guard PQsendPrepare(handle, new, statement.sql, Int32(types.count), types) == 1 else { throw error(of: nil) }
        preparing[n] = (statement.sql, new)
        name = new
      } else if name == nil, let earlier = preparing.values.first(where: { $0.sql == statement.sql }) {
        name = earlier.name
      }
      let sent = withParameters(parameters) { types, values, lengths, formats in
        if let name {
          PQsendQueryPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 1)
        } else {
          PQsendQueryParams(handle, statement.sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
      }
      guard sent == 1 else { throw error(of: nil) }
      if n == early?.last, PQsendFlushRequest(handle) != 1 { throw error(of: nil) }
      // The last of `statements` answered before `afterwards` run: a
      // connection lost during them finds that answer already read.
      if n == statements.count - 1, !afterwards.isEmpty, PQsendFlushRequest(handle) != 1 { throw error(of: nil) }
    }
    guard PQpipelineSync(handle) == 1 else { throw error(of: nil) }
    var rows: [Rows] = []
    var failure: PostgresError? = nil
    /// Keeps the first failure of `statements` (not of `afterwards`).
    func failed(_ n: Int, _ result: OpaquePointer?) {
      guard failure == nil, n < statements.count else { return }
      failure = error(of: result)
      failure?.statement = n
    }
    for n in 0..<(statements.count + afterwards.count) {
      if let new = preparing[n] {
        let result = PQgetResult(handle)
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        if status == PGRES_COMMAND_OK {
          prepared[new.sql] = new.name
        } else if status != PGRES_PIPELINE_ABORTED {
          failed(n, result)
        }
        if let result { PQclear(result) }
        while let extra = PQgetResult(handle) { PQclear(extra) }
      }
      let result = PQgetResult(handle)
      let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
      if status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK {
        if n < statements.count { rows.append(Rows(result!)) } else { PQclear(result) }
      } else {
        if status != PGRES_PIPELINE_ABORTED { failed(n, result) }
        if let result { PQclear(result) }
        if result == nil { break }
      }
      // Each statement's results end with a NULL.
      while let extra = PQgetResult(handle) { PQclear(extra) }
      if let early, n == early.last, failure == nil, rows.count == n + 1 { early.answered(rows) }
    }
    // The sync point.
    while let result = PQgetResult(handle) {
      let status = PQresultStatus(result)
      PQclear(result)
      if status == PGRES_PIPELINE_SYNC { break }
    }
    if let failure { throw failure }
    if isBroken, afterwards.isEmpty || rows.count < statements.count { throw error(of: nil) }
    return rows
  }

  /// Notifications received on channels this connection listens to; reads
  /// what the socket holds without blocking.
  func notifications() throws(PostgresError) -> [String] {
    guard PQconsumeInput(handle) == 1 else { throw error(of: nil) }
    var payloads: [String] = []
    while let notify = PQnotifies(handle) {
      payloads.append(String(cString: notify.pointee.extra))
      PQfreemem(notify)
    }
    return payloads
  }

  private func check(_ result: OpaquePointer?) throws(PostgresError) -> Rows {
    guard let result else { throw error(of: nil) }
    let status = PQresultStatus(result)
    guard status == PGRES_TUPLES_OK || status == PGRES_COMMAND_OK else {
      let failure = error(of: result)
      PQclear(result)
      throw failure
    }
    return Rows(result)
  }

  /// Lends libpq the parameters as the C arrays it takes.
  private func withParameters<R>(
    _ parameters: [Parameter],
    _ body: (UnsafePointer<Oid>?, UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?)
      -> R
  ) -> R {
    let types = parameters.map(\.type)
    let lengths = parameters.map { Int32($0.bytes?.count ?? 0) }
    let formats = [Int32](repeating: 1, count: parameters.count)
    // Copies that live until the call returns (an empty value still needs a pointer).
    let buffers: [UnsafeMutablePointer<CChar>?] = parameters.map { parameter in
      guard let bytes = parameter.bytes else { return nil }
      let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: max(bytes.count, 1))
      bytes.withUnsafeBytes { raw in
        if let base = raw.baseAddress {
          buffer.withMemoryRebound(to: UInt8.self, capacity: bytes.count) {
            $0.update(from: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
          }
        }
      }
      return buffer
    }
    defer { for buffer in buffers { buffer?.deallocate() } }
    let values = buffers.map { UnsafePointer($0) }
    return types.withUnsafeBufferPointer { types in
      values.withUnsafeBufferPointer { values in
        lengths.withUnsafeBufferPointer { lengths in
          formats.withUnsafeBufferPointer { formats in
            body(types.baseAddress, values.baseAddress, lengths.baseAddress, formats.baseAddress)
          }
        }
      }
    }
  }
}
