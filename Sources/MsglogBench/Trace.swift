import Foundation
import Msglog

/// A real editing history (../shared/traces), as msglog events: each
/// character is one item; a patch `[pos, del, text]` becomes `del` removes of
/// the item at `pos` and one insert per inserted character.
struct Trace {
  var name: String
  var requests: [WriteRequest]
  var endContent: String

  static func load(path: String, stream: StreamName) throws -> Trace {
    let gunzip = Process()
    gunzip.executableURL = URL(fileURLWithPath: "/bin/gzip")
    gunzip.arguments = ["-dc", path]
    let pipe = Pipe()
    gunzip.standardOutput = pipe
    try gunzip.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    gunzip.waitUntilExit()
    guard gunzip.terminationStatus == 0,
      let json = try JSONSerialization.jsonObject(with: data) as? [String: Any],
      let txns = json["txns"] as? [[String: Any]], let end = json["endContent"] as? String
    else { throw BenchError("cannot read trace \(path)") }
    var ids: [ItemID] = []  // the model, to name the items removed
    var requests: [WriteRequest] = []
    var n: UInt64 = 0
    for txn in txns {
      for case let patch as [Any] in txn["patches"] as? [Any] ?? [] {
        guard patch.count == 3, let pos = patch[0] as? Int, let del = patch[1] as? Int, let text = patch[2] as? String
        else { throw BenchError("bad patch in \(path)") }
        for _ in 0..<del {
          requests.append(WriteRequest(stream: stream, command: .remove(.id(ids.remove(at: pos)))))
        }
        for (offset, scalar) in text.unicodeScalars.enumerated() {
          n += 1
          let id = ItemID(canonical: String(format: "00000000-0000-4000-8000-%012llx", n))!
          ids.insert(id, at: pos + offset)
          requests.append(
            WriteRequest(
              stream: stream,
              command: .insert(InsertRequest(index: pos + offset, text: String(scalar), id: id))))
        }
      }
    }
    let name = URL(fileURLWithPath: path).lastPathComponent.replacingOccurrences(of: ".json.gz", with: "")
    return Trace(name: name, requests: requests, endContent: end)
  }
}

struct BenchError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
