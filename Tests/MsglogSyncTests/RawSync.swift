import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// What the trust tests send and plant that `msglog` itself never would: a
/// push as any client of the server can make it, and a record rewritten
/// behind msglog's back as an older msglog let a bad push through.
enum RawSync {
  /// The server's log id, from its hello.
  static func logID(of served: ServedLog) throws -> String {
    let hello = served.request("GET", "/api/sync?protocol=1")
    let object = try JSONSerialization.jsonObject(with: Data(hello.body.utf8)) as? [String: Any]
    return try #require(object?["log"] as? String, "\(hello)")
  }

  /// A new replica secret as the wire has it: 64 lowercase hex digits.
  static func newSecret() -> String { ReplicaSecret.random().hex }

  /// An append as a replica pushes it (`ReplicaChange`'s JSON).
  static func append(
    _ number: Int, text: String, sender: String? = nil, seen: Int = 0, made: String = Timestamp.now().rfc3339,
    id: String = UUID().uuidString.lowercased()
  ) -> [String: Any] {
    var change: [String: Any] = [
      "change": number, "made": made, "basis": 0, "op": "append", "stream": "main", "id": id, "text": text,
      "seen": seen,
    ]
    if let sender { change["sender"] = sender }
    return change
  }

  /// A remove of `id` as a replica pushes it.
  static func remove(_ number: Int, id: String) -> [String: Any] {
    ["change": number, "made": Timestamp.now().rfc3339, "basis": 0, "op": "remove", "stream": "main", "id": id]
  }

  /// `POST /api/sync/push` with these members (`secret` left out when nil).
  static func push(
    _ served: ServedLog, log: String, replica: String, secret: String?, changes: [[String: Any]]
  ) throws -> ServedLog.Reply {
    var body: [String: Any] = ["protocol": 1, "log": log, "replica": replica, "changes": changes]
    if let secret { body["secret"] = secret }
    let data = try JSONSerialization.data(withJSONObject: body)
    return served.request("POST", "/api/sync/push", String(decoding: data, as: UTF8.self))
  }

  /// The outcomes of a push's answer: `[result, error or seq]` each.
  static func outcomes(_ reply: ServedLog.Reply) throws -> [[String: Any]] {
    let object = try JSONSerialization.jsonObject(with: Data(reply.body.utf8)) as? [String: Any]
    return try #require(object?["outcomes"] as? [[String: Any]], "\(reply)")
  }

  /// Rewrites the record at `seq` of `s`'s log behind msglog's back, with
  /// its checksum made anew: the event it holds, changed by `change`. No
  /// derived row depends on a record's text, sender or origin, so only a
  /// check of the record's own values can tell.
  static func rewriteRecord(_ s: Sandbox, seq: UInt64, _ change: (inout Event) -> Void) throws {
    var event = try #require(try EventLog(s.db).events(from: seq, limit: 1).first)
    change(&event)
    let hex = Self.hex(EventRecord.encode(event))
    switch s.store {
    case .lmdb:
      putLMDB(s.db, table: "events", key: [UInt8](bigEndian: seq), value: EventRecord.encode(event))
    case .postgres:
      let run = PostgresCluster.psql(
        "UPDATE msglog.events SET record = '\\x\(hex)' WHERE seq = \(seq)", database: s.databaseName!)
      #expect(run.code == 0, "\(run)")
    }
  }

  static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

  /// Puts `value` under `key` in the named table of the LMDB database at
  /// `path`, behind msglog's back (Python's `lmdb`, as another program could).
  static func putLMDB(_ path: String, table: String, key: [UInt8], value: [UInt8]) {
    let script = """
      import lmdb, sys
      env = lmdb.open(sys.argv[1], max_dbs=16, map_size=1 << 36)
      table = env.open_db(sys.argv[2].encode(), create=False)
      with env.begin(write=True) as txn:
          txn.put(bytes.fromhex(sys.argv[3]), bytes.fromhex(sys.argv[4]), db=table)
      """
    let run = python(["-c", script, path, table, hex(key), hex(value)])
    #expect(run.code == 0, "\(run)")
  }
}
