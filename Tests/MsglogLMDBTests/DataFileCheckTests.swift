import Foundation
import Msglog
import MsglogTestSupport
import Testing

@testable import MsglogLMDB

/// Every process that opens a database first checks that its data file is
/// as long as its newest meta page says (`DatabaseFiles.checkDataFile`),
/// while other processes may be writing to it. A CI run of four writers
/// at once had one refused: "its data.mdb is truncated (126976 bytes; its
/// root page 32 lies past the end)". The check had taken the file's size,
/// then a writer grew the file and committed, then the check read the
/// meta page that commit wrote.
@Suite struct DataFileCheckTests {
  /// A writer commits in the middle of each check, growing the file (a
  /// text of 64 kB a time, past the file's end): the check never takes
  /// the file for cut short. Fails with the size taken first.
  @Test func aCommitInTheMiddleOfTheCheckIsNoTruncation() throws {
    let dir = TemporaryDirectory()
    let log = try EventLog(dir.db)
    try log.append("seed")
    let file = dir.db + "/data.mdb"
    let text = String(repeating: "x", count: 64 * 1024)
    var refusals: [String] = []
    var grown = 0
    for n in 0..<50 {
      let before = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
      do {
        try DatabaseFiles.checkDataFile(file, shown: dir.db) { _ = try? log.append("\(n) \(text)") }
      } catch {
        refusals.append("\(error)")
      }
      let after = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int ?? 0
      if after > before { grown += 1 }
    }
    #expect(grown == 50, "the writes in the middle grew the file \(grown) times of 50")
    #expect(refusals.isEmpty, "\(refusals.count) of 50 checks refused a healthy file: \(refusals.first ?? "")")
    try DatabaseFiles.checkDataFile(file, shown: dir.db)
    #expect(try log.items().items.count == 51)
  }
}
