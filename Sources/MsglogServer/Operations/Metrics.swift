import Msglog
import Synchronization

/// What `/metrics` shows, in Prometheus's text format 0.0.4: requests by
/// method, route and status, their durations by route, the group commit's
/// batches, the open event streams, the sync's changes, and the process's
/// own figures (`ProcessFigures`).
///
/// Counting is a few additions under one uncontended lock per request and
/// per transaction (not per write); with `--no-metrics` nothing is counted
/// and `/metrics` is not served.
package final class Metrics: CommitObserver, Sendable {
  /// What happened to one change a replica pushed (`msglog sync`).
  package enum SyncResult: String, CaseIterable, Sendable {
    /// Done as it was made.
    case applied
    /// Sent again after its answer was lost: already done, not done twice.
    case duplicate
    /// Done at another index than the one its user saw (the list moved on).
    case rebased
    /// Refused, with its reason (the replica keeps it).
    case refused
  }

  private struct RequestKey: Hashable {
    var method: String
    var route: String
    var code: UInt32
  }

  private struct HTTPFigures {
    var requests: [RequestKey: UInt64] = [:]
    var durations: [String: Histogram] = [:]
  }

  private struct CommitFigures {
    var batches = Histogram(bounds: Metrics.batchBounds)
    var durations = Histogram(bounds: Metrics.commitBounds)
    var events: UInt64 = 0
  }

  private let http = Mutex(HTTPFigures())
  private let commits = Mutex(CommitFigures())
  private let openStreams = Atomic<Int>(0)
  private let syncCounts = Mutex<[SyncResult: UInt64]>([:])
  private let refusals = Mutex<[String: UInt64]>([:])

  static let requestBounds: [Double] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30,
  ]
  static let batchBounds: [Double] = [1, 2, 4, 8, 16, 32, 64, 128, 256]
  static let commitBounds: [Double] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
  ]

  package init() {}

  // MARK: - Counting

  /// One request answered: `method` as sent (anything unusual as `other`),
  /// `route` its route's path (`none` when it matched none, so that made-up
  /// paths cannot make up series).
  func requested(method: String, route: String, code: UInt32, seconds: Double) {
    let method = ["GET", "HEAD", "POST", "OPTIONS"].contains(method) ? method : "other"
    http.withLock { figures in
      figures.requests[RequestKey(method: method, route: route, code: code), default: 0] += 1
      figures.durations[route, default: Histogram(bounds: Self.requestBounds)].observe(seconds)
    }
  }

  package func committed(writes: Int, events: Int, duration: Duration) {
    let (seconds, attoseconds) = duration.components
    let elapsed = Double(seconds) + Double(attoseconds) / 1e18
    commits.withLock { figures in
      figures.batches.observe(Double(writes))
      figures.durations.observe(elapsed)
      figures.events += UInt64(events)
    }
  }

  /// An event stream opened (+1) or ended (-1).
  func streamsChanged(by change: Int) { openStreams.wrappingAdd(change, ordering: .relaxed) }

  /// One pushed change's outcome: the sync's route handlers call this for
  /// each change they answer (`msglog_sync_changes_total{result}`).
  package func syncChanges(result: SyncResult, count: Int = 1) {
    syncCounts.withLock { $0[result, default: 0] += UInt64(count) }
  }

  /// A request refused (401, 403, 429) for `reason` (`msglog_refusals_total{reason}`).
  func refused(reason: String) {
    refusals.withLock { $0[reason, default: 0] += 1 }
  }

  // MARK: - The text format

  /// The whole exposition, with the log's head seq and sync's bookkeeping
  /// (nil when it could not be read) read now.
  func exposition(headSeq: UInt64, syncBookkeeping: SyncBookkeeping? = nil, process: ProcessFigures) -> String {
    var out = PrometheusText()
    out.family("msglog_head_seq", .gauge, "The seq of the log's last event.")
    out.sample("msglog_head_seq", [], Double(headSeq))
    let (commitFigures, http, sync) = (commits.withLock { $0 }, self.http.withLock { $0 }, syncCounts.withLock { $0 })
    out.family("msglog_events_appended_total", .counter, "Events this server appended.")
    out.sample("msglog_events_appended_total", [], Double(commitFigures.events))
    out.family("msglog_http_requests_total", .counter, "Requests answered, by method, route and status code.")
    for (key, count) in http.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.code) < ($1.key.route, $1.key.method, $1.key.code) }) {
      out.sample(
        "msglog_http_requests_total", [("method", key.method), ("route", key.route), ("code", String(key.code))],
        Double(count))
    }
    out.family(
      "msglog_http_request_duration_seconds", .histogram,
      "From a request's head to the last byte of its answer (an event stream: its whole life), by route.")
    for (route, histogram) in http.durations.sorted(by: { $0.key < $1.key }) {
      out.histogram("msglog_http_request_duration_seconds", [("route", route)], histogram)
    }
    out.family("msglog_commit_batch_size", .histogram, "Writes committed together in one transaction.")
    out.histogram("msglog_commit_batch_size", [], commitFigures.batches)
    out.family("msglog_commit_duration_seconds", .histogram, "How long one transaction of the group commit took.")
    out.histogram("msglog_commit_duration_seconds", [], commitFigures.durations)
    out.family("msglog_followers", .gauge, "Event streams (/api/follow) open now.")
    out.sample("msglog_followers", [], Double(max(openStreams.load(ordering: .relaxed), 0)))
    out.family(
      "msglog_refusals_total", .counter,
      "Requests refused 401, 403 or 429, by reason: missing, unknown, revoked, expired, scope, throttled, store, "
        + "policy.")
    for (reason, count) in refusals.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
      out.sample("msglog_refusals_total", [("reason", reason)], Double(count))
    }
    out.family("msglog_sync_changes_total", .counter, "Changes pushed by replicas, by what became of them.")
    for result in SyncResult.allCases {
      out.sample("msglog_sync_changes_total", [("result", result.rawValue)], Double(sync[result] ?? 0))
    }
    if let syncBookkeeping {
      // What replicas leave beside the events (a refused change appends
      // nothing, yet its outcome is kept): read from the store at each scrape.
      out.family("msglog_sync_replicas", .gauge, "Replica ids whose progress the log keeps.")
      out.sample("msglog_sync_replicas", [], Double(syncBookkeeping.replicas))
      out.family("msglog_sync_outcomes", .gauge, "Outcomes of replicas' changes the log keeps (applied, unchanged, refused).")
      out.sample("msglog_sync_outcomes", [], Double(syncBookkeeping.outcomes))
      out.family("msglog_sync_bookkeeping_bytes", .gauge, "Bytes the replicas' progress and outcomes take in the store.")
      out.sample("msglog_sync_bookkeeping_bytes", [], Double(syncBookkeeping.bytes))
    }
    process.write(into: &out)
    return out.text
  }
}

/// A histogram's buckets (counts per bound, not yet cumulative), sum and count.
struct Histogram {
  let bounds: [Double]
  var counts: [UInt64]
  var sum: Double = 0
  var count: UInt64 = 0

  init(bounds: [Double]) {
    self.bounds = bounds
    counts = Array(repeating: 0, count: bounds.count)
  }

  mutating func observe(_ value: Double) {
    if let i = bounds.firstIndex(where: { value <= $0 }) { counts[i] += 1 }
    sum += value
    count += 1
  }
}

/// Prometheus's text format 0.0.4: `# HELP` and `# TYPE` once per family,
/// then its samples; label values escaped; histograms as cumulative
/// `_bucket{le}` lines ending with `+Inf`, then `_sum` and `_count`.
struct PrometheusText {
  enum Kind: String {
    case counter, gauge, histogram
  }

  private(set) var text = ""

  mutating func family(_ name: String, _ kind: Kind, _ help: String) {
    text += "# HELP \(name) \(help.replacing("\\", with: "\\\\").replacing("\n", with: "\\n"))\n"
    text += "# TYPE \(name) \(kind.rawValue)\n"
  }

  mutating func sample(_ name: String, _ labels: [(String, String)], _ value: Double) {
    text += name
    if !labels.isEmpty {
      text += "{" + labels.map { "\($0.0)=\"\(Self.escaped($0.1))\"" }.joined(separator: ",") + "}"
    }
    text += " " + Self.number(value) + "\n"
  }

  mutating func histogram(_ name: String, _ labels: [(String, String)], _ histogram: Histogram) {
    var cumulative: UInt64 = 0
    for (bound, count) in zip(histogram.bounds, histogram.counts) {
      cumulative += count
      sample(name + "_bucket", labels + [("le", Self.number(bound))], Double(cumulative))
    }
    sample(name + "_bucket", labels + [("le", "+Inf")], Double(histogram.count))
    sample(name + "_sum", labels, histogram.sum)
    sample(name + "_count", labels, Double(histogram.count))
  }

  static func escaped(_ value: String) -> String {
    value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"").replacing("\n", with: "\\n")
  }

  /// Whole numbers without a fraction (counts), others as Swift prints them.
  static func number(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return "\(value)"
  }
}
