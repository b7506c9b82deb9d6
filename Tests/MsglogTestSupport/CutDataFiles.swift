import Foundation
import Testing

/// LMDB data files cut short behind msglog's back, their roots still
/// inside them (so the checks at opening pass), with pages in use lost past
/// their end: what `verify` names and every write refuses.
public enum CutDataFiles {
  /// A database whose file ends in pages in use that no root is, and the
  /// bytes of its data file.
  ///
  /// Where the last pages lie is up to LMDB's page reuse (and the random
  /// ids' places in their indexes): after small writes the file's last page
  /// was, one run in six, the main root, which the checks at opening see.
  /// A last message of nearly 1 MiB needs 245 pages in one run, which LMDB
  /// takes from the file's end when no run of free pages is that long, while
  /// the roots it touches reuse free pages inside: the file ends in pages in
  /// use that no root is.
  public static func endingInPagesInUse() throws -> (Sandbox, Data) {
    let s = Sandbox()
    let lines = (0..<20_000).map { i in
      #"{"op":"append","stream":"s\#(i % 5)","text":"m-\#(i) \#(String(repeating: "y", count: i * 37 % 200 + 1))"}"#
    }
    #expect(s.run(["import"], stdin: Data(lines.joined(separator: "\n").utf8)).code == 0)
    #expect(s.run("trim", "--before", "19000").code == 0)
    for i in 1...30 { #expect(s.run("--stream", "s\(i % 5)", "append", "post \(i)").code == 0) }
    #expect(s.run(["append", "--lines"], stdin: Data(String(repeating: "z", count: 1_000_000).utf8)).code == 0)
    return (s, try Data(contentsOf: URL(fileURLWithPath: s.db + "/data.mdb")))
  }

  /// A copy of `whole` without its last `bytes`, in a sandbox of its own.
  public static func cut(_ whole: Data, by bytes: Int) throws -> Sandbox {
    let cut = Sandbox()
    try FileManager.default.createDirectory(atPath: cut.db, withIntermediateDirectories: true)
    try whole.prefix(whole.count - bytes).write(to: URL(fileURLWithPath: cut.db + "/data.mdb"))
    return cut
  }

  /// How `verify` and a refused write begin their line.
  public static let said = "the database file is cut short: it is "
}
