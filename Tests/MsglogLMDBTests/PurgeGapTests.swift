import CLMDB
import Foundation
import Msglog
import MsglogCore
import MsglogTestSupport
import Testing

@testable import MsglogLMDB

/// `purge`'s gap scan (`LMDBStore.dirtyGaps`): the unused middle of every
/// page in use is zeros after it, wherever LMDB's reused page buffers left
/// old bytes — pages no purge mark names.
@Suite struct PurgeGapTests {
  /// The pages in use whose unused middle holds `needle` (nil: anything
  /// but zeros), found as purge finds them (every free page read from
  /// LMDB's table 0), in the file.
  private func gapsHolding(_ needle: String?, in path: String) throws -> [Int] {
    let (free, last, pageSize) = try freePages(in: path)
    let file = try Data(contentsOf: URL(fileURLWithPath: path + "/data.mdb"))
    return file.withUnsafeBytes { bytes in
      LMDBStore.dirtyGaps(in: bytes.baseAddress!, pages: last + 1, pageSize: pageSize, free: free).filter { gap in
        let start = gap.page * pageSize
        guard let needle else { return true }
        return Data(bytes[(start + gap.range.lowerBound)..<(start + gap.range.upperBound)]).range(
          of: Data(needle.utf8)) != nil
      }.map(\.page)
    }
  }

  /// Every free page, sorted, as purge reads them from LMDB's table 0; the
  /// last page in use; the page size.
  private func freePages(in path: String) throws -> (free: [Int], last: Int, pageSize: Int) {
    let tables = try LMDBTables(path: path, create: false)
    let pageSize = tables.environment.pageSize
    let (free, last) = try tables.environment.read { txn -> ([Int], Int) in
      var pages: [Int] = []
      try txn.withCursor(Database(dbi: 0)) { cursor in
        var entry = try cursor.first()
        while let (_, value) = entry {
          let count = Int(value.loadUnaligned(as: UInt64.self))
          for i in stride(from: 1, through: count, by: 1) {
            pages.append(Int(value.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
          }
          entry = try cursor.next()
        }
      }
      var info = MDB_envinfo()
      mdb_env_info(tables.environment.env, &info)
      return (pages.sorted(), Int(info.me_last_pgno))
    }
    return (free, last, pageSize)
  }

  /// The page header as the scan reads it (liblmdb 0.9, PAGEBASE 0): u64
  /// page number, u16 pad, u16 flags, u16 lower, u16 upper — checked on a
  /// table of one leaf page, whose entries' bytes lie in the map.
  @Test func thePageHeaderIsWhereTheScanReadsIt() throws {
    let dir = TemporaryDirectory()
    let tables = try LMDBTables(path: dir.db, create: true)
    let env = tables.environment
    let pageSize = env.pageSize
    try env.write { txn in
      for i in 0..<5 { try txn.put(tables.heads, Array("key \(i)".utf8), Array("value number \(i)".utf8)) }
    }
    try env.read { txn in
      try txn.withCursor(tables.heads) { cursor in
        let entry = try #require(try cursor.first())
        let address = UInt(bitPattern: entry.key.baseAddress!)
        let page = UnsafeRawPointer(bitPattern: address - address % UInt(pageSize))!
        let ranges = env.mappedRanges()
        let map = try #require(ranges.first { $0.contains(address) })
        let number = Int((address - map.lowerBound) / UInt(pageSize))
        #expect(page.loadUnaligned(as: UInt64.self) == UInt64(number))
        #expect(page.loadUnaligned(fromByteOffset: 10, as: UInt16.self) == LMDBStore.PageFlag.leaf)
        let lower = Int(page.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
        let upper = Int(page.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
        #expect(lower == 16 + 2 * 5, "five node pointers after the header")
        // The first node (the smallest key) at its pointer: u16 u16 data
        // size, u16 flags, u16 key size, the key.
        let first = Int(page.loadUnaligned(fromByteOffset: 16, as: UInt16.self))
        #expect(first >= upper && first < pageSize)
        #expect(page.loadUnaligned(fromByteOffset: first + 6, as: UInt16.self) == UInt16(entry.key.count))
        #expect(UnsafeRawPointer(bitPattern: address) == page + first + 8)
        #expect(LMDBStore.unusedMiddle(of: page, pageSize: pageSize, leaf2: false) == lower..<upper)
      }
    }
  }

  /// Import lines: every 7th one mallory's, holding `sentinel`.
  private func importLines(_ sentinel: String) -> [UInt8] {
    var lines: [String] = []
    for i in 0..<3_000 {
      lines.append(
        i % 7 == 3
          ? #"{"op":"append","text":"\#(sentinel) \#(i) \#(String(repeating: "secret ", count: 20))","sender":"mallory"}"#
          : #"{"op":"append","text":"line \#(i), of an ordinary length","sender":"ann"}"#)
    }
    return Array(lines.joined(separator: "\n").utf8)
  }

  /// A new database's import committed in pieces (each piece reusing the
  /// page buffers of the ones before, uncleared) is scrubbed before it is
  /// put in place: no page in use holds anything in its unused middle.
  @Test func anImportInPiecesLeavesNoOldBytesInItsPages() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try LMDBTables.LogTransaction.$pieceBytes.withValue(8192) {
      _ = try EventLog(dir.db).importLines(importLines(sentinel))
    }
    #expect(try LMDBTables(path: dir.db, create: false).lastCommit > 20, "committed in pieces")
    #expect(try gapsHolding(nil, in: dir.db).isEmpty, "every unused middle is zeros")
    #expect(try EventLog(dir.db).verify().isClean)
  }

  /// An import committed in pieces and not scrubbed (as an older msglog
  /// leaves it), then an erase of some of its texts in a new process
  /// (which marks nothing: its own pages are clean): copies of erased
  /// texts sit in the unused middle of pages the erase never wrote, which
  /// no mark names. After purge no file holds them.
  @Test func textsLeftInPagesAnImportWroteAreGoneAfterPurge() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    try LMDBStore.$scrubsNewDatabases.withValue(false) {
      try LMDBTables.LogTransaction.$pieceBytes.withValue(8192) {
        _ = try EventLog(dir.db).importLines(importLines(sentinel))
      }
    }
    #expect(try LMDBTables(path: dir.db, create: false).lastCommit > 20, "committed in pieces")
    #expect(try EventLog(dir.db).erase(sender: "mallory").erased.count == 429)
    let stale = try gapsHolding(sentinel, in: dir.db)
    #expect(!stale.isEmpty, "a page in use holds an erased text in its unused middle")
    // A few pages a window, so that the scan goes window by window.
    _ = try LMDBStore.$scanWindow.withValue(3) { try EventLog(dir.db).purge() }
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
    #expect(try gapsHolding(nil, in: dir.db).isEmpty, "every unused middle is zeros")
    #expect(try EventLog(dir.db).verify().isClean)
  }

  /// The scan a window at a time (as purge and a new database's scrub
  /// run it, letting go of each) finds the gaps the whole scan finds,
  /// whatever the window: an overflow value's pages running past a
  /// window's end included.
  @Test func aScanWindowByWindowFindsWhatTheWholeScanFinds() throws {
    let dir = TemporaryDirectory()
    var lines = String(decoding: importLines("SENTINEL"), as: UTF8.self)
    for i in 0..<6 {
      lines += "\n" + #"{"op":"append","text":"long \#(i) \#(String(repeating: "overflow ", count: 2_000))"}"#
    }
    try LMDBStore.$scrubsNewDatabases.withValue(false) {
      try LMDBTables.LogTransaction.$pieceBytes.withValue(8192) {
        _ = try EventLog(dir.db).importLines(Array(lines.utf8))
      }
    }
    // Some pages free: the erase's transaction frees the pages it copies.
    #expect(try EventLog(dir.db).erase(sender: "mallory").erased.count == 429)
    let (free, last, pageSize) = try freePages(in: dir.db)
    #expect(!free.isEmpty)
    let pages = last + 1
    let file = try Data(contentsOf: URL(fileURLWithPath: dir.db + "/data.mdb"))
    try file.withUnsafeBytes { bytes in
      let whole = LMDBStore.dirtyGaps(in: bytes.baseAddress!, pages: pages, pageSize: pageSize, free: free)
      #expect(!whole.isEmpty, "an unscrubbed import leaves gaps")
      var ranPast = false
      for window in [1, 2, 3, 5, 64] {
        var found: [LMDBStore.DirtyGap] = []
        LMDBStore.forEachGapWindow(in: bytes.baseAddress!, pages: pages, pageSize: pageSize, free: free, window: window)
        {
          gaps, scanned in
          found += gaps
          if scanned.count > window { ranPast = true }
        }
        try #require(found.count == whole.count, "window \(window)")
        #expect(zip(found, whole).allSatisfy { $0.page == $1.page && $0.range == $1.range }, "window \(window)")
      }
      #expect(ranPast, "an overflow value ran past a window's end")
    }
  }

  /// Another LMDB writer (python3-lmdb) writing in several transactions of
  /// one environment: the first puts a text's record again as it is (LMDB
  /// copies its page into a page buffer), each next one makes a table of
  /// its own, one entry in one page — built in buffers LMDB reuses
  /// uncleared, the text's among them, and never written again.
  /// No mark names those pages, and the writer says nothing of them; after
  /// msglog erases the text, purge leaves no file holding it.
  @Test func aTextAnotherWriterCarriedIntoItsPagesIsGoneAfterPurge() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    do {
      let log = try EventLog(dir.db)
      try log.append(contentsOf: (0..<300).map { NewItem("filler \($0) before") })
      try log.append("\(sentinel) " + String(repeating: "secret ", count: 40), sender: "eve")
      try log.append(contentsOf: (0..<300).map { NewItem("filler \($0) after") })
    }
    let script = """
      import lmdb, sys
      env = lmdb.open(sys.argv[1], max_dbs=32)
      events = env.open_db(b"events", create=False)
      with env.begin(write=True) as txn:
          for key, value in txn.cursor(db=events):
              if sys.argv[2].encode() in value:
                  txn.put(key, bytes(value), db=events)
      for n in range(4):
          with env.begin(write=True) as txn:
              table = env.open_db(b"another-writer-%d" % n, txn=txn)
              txn.put(b"written %d" % n, b"by another writer", db=table)
      """
    let python = Process()
    python.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
    python.arguments = ["-c", script, dir.db, sentinel]
    try python.run()
    python.waitUntilExit()
    #expect(python.terminationStatus == 0)
    #expect(try EventLog(dir.db).erase(sender: "eve").erased.count == 1)
    #expect(!(try gapsHolding(sentinel, in: dir.db)).isEmpty, "a page in use holds the text in its unused middle")
    _ = try EventLog(dir.db).purge()
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
    #expect(try EventLog(dir.db).verify().isClean)
  }
}

extension PurgeGapTests {
  /// One process appending in turn texts kept in a leaf (under 2 KB) and
  /// texts of one overflow page each (2–3 KB), one transaction each, as
  /// `serve` or a replica following does: LMDB builds each one-page value
  /// in a page buffer it reuses as it is, so a leaf that buffer held
  /// before — earlier texts among its records — stays past the value's
  /// end. After those texts are erased, purge leaves no file holding them
  /// (before: 18 of 60 erased texts stayed, in backups too).
  @Test func textsLeftPastAnOverflowValuesEndAreGoneAfterPurge() throws {
    let dir = TemporaryDirectory()
    let sentinel = "SENTINEL-" + UUID().uuidString
    var secrets: [ItemID] = []
    do {
      let log = try EventLog(dir.db)
      try log.append("before")
      for i in 0..<60 {
        let text = String(String(repeating: "\(sentinel)-\(i) ", count: 60).prefix(1000 + i * 15))
        secrets.append(try log.append(text).event.id)
        try log.append(String(repeating: "k", count: 2100 + i * 10))
      }
    }
    #expect(try EventLog(dir.db).erase(secrets.map { .id($0) }).erased.count == 60)
    let file = try Data(contentsOf: URL(fileURLWithPath: dir.db + "/data.mdb"))
    #expect(file.range(of: Data(sentinel.utf8)) != nil, "the erase left a copy for purge to find")
    _ = try EventLog(dir.db).purge()
    #expect(filesHolding(sentinel, in: dir.db).isEmpty, "\(filesHolding(sentinel, in: dir.db)) still hold it")
    #expect(try gapsHolding(nil, in: dir.db).isEmpty, "every unused middle and end is zeros")
    #expect(try EventLog(dir.db).verify().isClean)
    #expect(try EventLog(dir.db).items().items.count == 61)
  }
}
