import Foundation
import MsglogTestSupport
import Testing

/// A data file cut short behind msglog's back, its roots still inside it
/// (so the checks at opening pass), with pages in use lost past its end.
/// Before, an `append` went through: it wrote only the pages on its path,
/// lengthened the file with them, and the lost pages became holes of zeros
/// that `verify` then called a damaged record, no longer a file cut short.
/// Now `verify` says what it is, every write and `backup` refuse it, and
/// reads go on as far as they can (an `export` saves what comes before the
/// first page lost).
@Suite struct FileCutShortTests {
  /// Cut by a byte (the last page, in use, partly lost) and by whole pages:
  /// `verify` names the page lost, each write and `backup` are refused,
  /// exit 1, the file not changed by a byte. A cut that loses only free
  /// pages (LMDB counts pages allocated and freed in one transaction, and
  /// never writes them) is sound: everything works, and `verify` finds it
  /// clean.
  @Test func writesIntoAFileCutShortAreRefusedAndChangeNothing() throws {
    let (_, whole) = try CutDataFiles.endingInPagesInUse()
    var refused = 0
    for bytes in [1, 4096, 3 * 4096, 8 * 4096] {
      let s = try CutDataFiles.cut(whole, by: bytes)
      let file = s.db + "/data.mdb"
      let before = try Data(contentsOf: URL(fileURLWithPath: file))
      let verify = s.run("verify")
      guard verify.stdout.hasPrefix(CutDataFiles.said) else {
        // Only free pages were lost: as sound as it was.
        #expect(verify.code == 0 && verify.stdout.hasPrefix("ok: "), "cut by \(bytes): \(verify)")
        #expect(s.run("append", "after").code == 0, "cut by \(bytes)")
        continue
      }
      refused += 1
      #expect(
        verify.code == 1 && verify.stderr.hasPrefix("msglog: verify found 1 problem"), "cut by \(bytes): \(verify)")
      #expect(verify.stdout.contains("which is in use, lies past its end"), "cut by \(bytes): \(verify)")
      let writes: [([String], String)] = [
        (["append", "lost?"], ""), (["--stream", "s1", "insert", "0", "first"], ""), (["move", "0", "1"], ""),
        (["import"], #"{"op":"append","text":"imported"}"#), (["erase", "--sender", "nobody"], ""), (["purge"], ""),
        (["trim", "--before", "19500"], ""), (["verify", "--repair"], ""), (["backup", s.dir + "/copy"], ""),
      ]
      for (arguments, stdin) in writes {
        let r = s.run(arguments, stdin: Data(stdin.utf8))
        #expect(r.code == 1 && r.stderr.hasPrefix("msglog: database error: " + CutDataFiles.said), "\(arguments): \(r)")
        #expect(r.stderr.contains("save what can be read with 'msglog export'"), "\(arguments): \(r)")
      }
      #expect(!FileManager.default.fileExists(atPath: s.dir + "/copy"))
      let after = try Data(contentsOf: URL(fileURLWithPath: file))
      #expect(after == before, "cut by \(bytes): the file was \(before.count) bytes, is \(after.count)")
    }
    #expect(refused >= 2, "only \(refused) of the cuts lost a page in use")
  }

  /// Reads are not refused: an export of a file cut short prints the
  /// events it can read before the first page lost, for a new database.
  @Test func anExportOfAFileCutShortSavesWhatItCanRead() throws {
    let (_, whole) = try CutDataFiles.endingInPagesInUse()
    let s = try CutDataFiles.cut(whole, by: 1)
    try #require(s.run("verify").stdout.hasPrefix(CutDataFiles.said))
    let export = s.run("export")
    #expect(export.code == 1 || export.code == 0, "\(export)")
    let lines = export.stdout.split(separator: "\n")
    #expect(lines.count > 1_000, "\(lines.count) lines saved: \(export.stderr)")
    let saved = Sandbox()
    #expect(saved.run(["import"], stdin: Data(export.stdout.utf8)).code == 0)
    #expect(saved.run("verify").stdout.hasPrefix("ok: "))
  }
}
