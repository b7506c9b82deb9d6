import CLMDB
import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// Part of step 2 of `purge` (`LMDBStore+Purge`): the unused middle of
/// every page in use, read in the data file and overwritten with zeros
/// where it is not zeros already (the gap scan).
///
/// Why there can be old bytes there: LMDB builds a page it writes in a
/// buffer and writes it whole, unused middle and all. A buffer is zeros
/// only when freshly allocated; LMDB reuses a process's buffers from one
/// write transaction to the next without clearing them (`mdb_page_malloc`
/// hands out `me_dpages` as they are), and a copied page (`mdb_page_copy`)
/// takes the used parts of the old page plus up to 6 bytes of its unused
/// middle at each end (word alignment). So any process that writes more
/// than once (`serve`, a bulk `import` committing in pieces, any other
/// LMDB writer) may leave, in the unused middle of a page in use, bytes
/// of any page it had in memory before: a text erased since, say. Marks
/// cannot name these places, and copying every page (what purge did
/// before) copies the fringes along. Zeroing them in place reaches all of
/// them, at the cost of reading the file once.
///
/// Why writing there is safe: it runs in the scrub's write transaction
/// (no other writer; the pages in use are the last commit's, and LMDB
/// never changes a committed page in place: a writer copies it first), it
/// writes only bytes LMDB never reads (between `mp_lower` and `mp_upper`
/// of a branch or leaf page: the node pointers end at the first, the
/// nodes begin at the second; and past a large value's end on its last
/// overflow page, found from a leaf whose header adds up; a reader
/// reading the page meanwhile reads none of them), and a `kill -9` or a
/// torn write leaves every other byte of the page as it was.
///
/// Page layout (liblmdb 0.9, `PAGEBASE` 0): u64 page number, u16 pad, u16
/// flags, u16 lower, u16 upper (an overflow page: u32 page count there),
/// offsets from the page's start; checked against the installed library
/// by `PurgeGapTests`.
///
/// The unused end of a value's overflow pages is scanned too, found from
/// the leaf node that names them (its data size and first page): LMDB
/// zeroes the last page of a new buffer of several pages, but a value of
/// one overflow page (about 2–4 KB on 4 KiB pages) gets a reused buffer
/// as it is, whatever page it held before — a leaf of other records, an
/// erased text among them — and a value shrunk in place keeps its old
/// end. Not reached: the one padding byte after a node of odd size (LMDB
/// keeps nodes 2-byte aligned; one byte of a text says nothing of it),
/// and sub-pages of sorted duplicates (msglog has none).
extension LMDBStore {
  /// Whether a new database is scrubbed before it is put in place
  /// (`scrubNewDatabase`; a test turns it off for its own task).
  @TaskLocal static var scrubsNewDatabases = true

  /// A new database, in its staging directory, that its first write
  /// committed in pieces (a bulk import): each piece reused the page
  /// buffers of the ones before (LMDB clears none), so its free pages and
  /// the unused middle of its pages in use — half of them, after an import
  /// of a million lines — hold bytes of earlier pages: live texts now, an
  /// erased one's later, which the first purge after that erase would zero
  /// (as costly as the rest of that purge). Scrubbed here instead (both,
  /// as purge does), while nobody else has the database open, at about 2 %
  /// of the import's time. Not synced: the caller syncs the database whole.
  static func scrubNewDatabase(at path: String) throws {
    guard scrubsNewDatabases else { return }
    let environment = try LMDBTables.openEnvironment(path, writer: true, shown: path, assertionHandler: nil)
    guard environment.lastCommittedTransaction > 1 else { return }
    _ = try environment.write {
      try scrubFreePages(in: $0, of: environment, freedBy: 0, scanGaps: true, syncing: false)
    }
  }

  /// A page's flags (`mp_flags`; `mdb.c` keeps them to itself).
  enum PageFlag {
    static let branch: UInt16 = 0x01
    static let leaf: UInt16 = 0x02
    static let overflow: UInt16 = 0x04
    static let meta: UInt16 = 0x08
    static let leaf2: UInt16 = 0x20
  }

  /// A page's unused middle that holds something: bytes `range` of page `page`.
  struct DirtyGap {
    let page: Int
    let range: Range<Int>
  }

  /// The unused middles, not zeros, of the branch and leaf pages in use:
  /// pages 2 (after the two meta pages) to the last one in use, less the
  /// free ones and the continuation pages of overflow values.
  /// - Parameters:
  ///   - file: the data file's first pages as mapped (at least `pages`).
  ///   - free: every page on the free list, sorted.
  static func dirtyGaps(in file: UnsafeRawPointer, pages: Int, pageSize: Int, free: [Int]) -> [DirtyGap] {
    dirtyGaps(in: file, from: 2, to: pages, of: pages, pageSize: pageSize, free: free).gaps
  }

  /// The gaps of pages 2 to `pages` a window of `window` pages at a time,
  /// in order: `body` gets each window's gaps and the pages scanned for
  /// them (past the window when an overflow value's pages run on; never
  /// past `pages`), after which the scan reads none of those pages again —
  /// but the last page of an overflow value a later window's leaf names,
  /// whose unused end it reads (and a gap there comes with that window).
  static func forEachGapWindow(
    in file: UnsafeRawPointer, pages: Int, pageSize: Int, free: [Int], window: Int,
    _ body: ([DirtyGap], Range<Int>) throws -> Void
  ) rethrows {
    var page = 2
    while page < pages {
      let (gaps, next) = dirtyGaps(
        in: file, from: page, to: min(page + max(window, 1), pages), of: pages, pageSize: pageSize, free: free)
      try body(gaps, page..<min(next, pages))
      page = next
    }
  }

  /// The same for the pages from `from` (2 or more, where a page begins)
  /// up to `to`, and where the next scan begins: `to`, or past it when an
  /// overflow value's pages run on. The unused ends of the overflow values
  /// its leaf pages name come with them, wherever those lie in the file's
  /// first `all` pages.
  static func dirtyGaps(in file: UnsafeRawPointer, from: Int, to pages: Int, of all: Int, pageSize: Int, free: [Int])
    -> (gaps: [DirtyGap], next: Int)
  {
    var gaps: [DirtyGap] = []
    // The first free page at or after `from` (the list is sorted).
    var (nextFree, high) = (0, free.count)
    while nextFree < high {
      let mid = (nextFree + high) / 2
      if free[mid] < from { nextFree = mid + 1 } else { high = mid }
    }
    var page = from
    while page < pages {
      while nextFree < free.count, free[nextFree] < page { nextFree += 1 }
      if nextFree < free.count, free[nextFree] == page {
        page += 1
        continue
      }
      let start = file + page * pageSize
      let flags = start.loadUnaligned(fromByteOffset: 10, as: UInt16.self)
      // A page whose header does not name it is no page of a tree (nor
      // one LMDB would read): left alone.
      guard start.loadUnaligned(as: UInt64.self) == UInt64(page) else {
        page += 1
        continue
      }
      if flags & PageFlag.overflow != 0 {
        page += max(1, Int(start.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        continue
      }
      page += 1
      let leaf2 = flags & PageFlag.leaf2 != 0
      if flags & PageFlag.leaf != 0, !leaf2 {
        overflowEnds(namedBy: start, in: file, pages: all, pageSize: pageSize, into: &gaps)
      }
      guard flags & (PageFlag.branch | PageFlag.leaf) != 0, flags & PageFlag.meta == 0,
        let gap = unusedMiddle(of: start, pageSize: pageSize, leaf2: leaf2),
        !isZeros(start + gap.lowerBound, count: gap.count),
        leaf2 || nodesLieAbove(gap.upperBound, in: start, pointers: gap.lowerBound, pageSize: pageSize)
      else { continue }
      gaps.append(DirtyGap(page: page - 1, range: gap))
    }
    return (gaps, page)
  }

  /// The unused ends, not zeros, of the overflow values a leaf page names:
  /// each node with `F_BIGDATA` holds the value's size (u16 low, u16 high)
  /// and, as its data, the number of its first overflow page, whose header
  /// says how many pages it has (u32 at 12). The value takes the header's
  /// 16 bytes and its size from that page's start; everything after, to
  /// the end of its last page, LMDB never reads. A node or an overflow
  /// header that does not add up is left alone.
  static func overflowEnds(
    namedBy leaf: UnsafeRawPointer, in file: UnsafeRawPointer, pages: Int, pageSize: Int, into gaps: inout [DirtyGap]
  ) {
    let header = 16
    // Zeros written in another page on the word of this one: only a leaf
    // whose header adds up and whose every node pointer points at or past
    // upper, inside the page (as the gap scan asks of a page it writes).
    guard let gap = unusedMiddle(of: leaf, pageSize: pageSize, leaf2: false),
      nodesLieAbove(gap.upperBound, in: leaf, pointers: gap.lowerBound, pageSize: pageSize)
    else { return }
    for pointer in stride(from: header, to: gap.lowerBound, by: 2) {
      let node = Int(leaf.loadUnaligned(fromByteOffset: pointer, as: UInt16.self))
      guard node + 8 <= pageSize,
        leaf.loadUnaligned(fromByteOffset: node + 4, as: UInt16.self) & NodeFlag.bigData != 0
      else { continue }
      let keySize = Int(leaf.loadUnaligned(fromByteOffset: node + 6, as: UInt16.self))
      guard node + 8 + keySize + 8 <= pageSize else { continue }
      let size =
        Int(leaf.loadUnaligned(fromByteOffset: node, as: UInt16.self))
        | Int(leaf.loadUnaligned(fromByteOffset: node + 2, as: UInt16.self)) << 16
      let first = Int(truncatingIfNeeded: leaf.loadUnaligned(fromByteOffset: node + 8 + keySize, as: UInt64.self))
      guard first >= 2, first < pages else { continue }
      let overflow = file + first * pageSize
      let count = Int(overflow.loadUnaligned(fromByteOffset: 12, as: UInt32.self))
      guard overflow.loadUnaligned(as: UInt64.self) == UInt64(first),
        overflow.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & PageFlag.overflow != 0,
        header + size <= count * pageSize, first + count <= pages
      else { continue }
      // From the value's end to the run's, a page at a time.
      var at = first * pageSize + header + size
      let end = (first + count) * pageSize
      while at < end {
        let page = at / pageSize
        let range = (at - page * pageSize)..<pageSize
        if !isZeros(file + at, count: range.count) { gaps.append(DirtyGap(page: page, range: range)) }
        at = (page + 1) * pageSize
      }
    }
  }

  /// A leaf node's flags (`mn_flags`), where they matter here.
  enum NodeFlag {
    /// The value lies in overflow pages; the node holds the first one's number.
    static let bigData: UInt16 = 0x01
  }

  /// Whether the library is LMDB 0.9 and the two meta pages read as the
  /// scan reads a header (their numbers, 0 and 1, and the meta flag).
  static func knowsPageLayout(of file: UnsafeRawPointer, pages: Int, pageSize: Int) -> Bool {
    var major: Int32 = 0
    var minor: Int32 = 0
    _ = mdb_version(&major, &minor, nil)
    guard major == 0, minor == 9, pages >= 2 else { return false }
    return (0..<2).allSatisfy { page in
      let start = file + page * pageSize
      return start.loadUnaligned(as: UInt64.self) == UInt64(page)
        && start.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & PageFlag.meta != 0
    }
  }

  /// The bytes of a branch or leaf page no node and no node pointer uses;
  /// nil when the header does not add up (then the page is left alone).
  static func unusedMiddle(of page: UnsafeRawPointer, pageSize: Int, leaf2: Bool) -> Range<Int>? {
    let header = 16
    let lower = Int(page.loadUnaligned(fromByteOffset: 12, as: UInt16.self))
    let upper = Int(page.loadUnaligned(fromByteOffset: 14, as: UInt16.self))
    guard header <= lower, lower <= upper, upper <= pageSize, lower % 2 == 0 else { return nil }
    if leaf2 {
      // Keys of one size packed after the header; lower and upper only
      // count them: n keys of k bytes make lower 16 + 2n, upper
      // pageSize − n(k − 2), so they end at lower + pageSize − upper.
      let used = lower + pageSize - upper
      return used <= pageSize ? used..<pageSize : nil
    }
    return lower..<upper
  }

  /// Whether every node pointer (the u16s from the header to `pointers`)
  /// points at or past `upper`, inside the page: a page about to be
  /// written whose header is not what it seems fails here.
  static func nodesLieAbove(_ upper: Int, in page: UnsafeRawPointer, pointers: Int, pageSize: Int) -> Bool {
    for offset in stride(from: 16, to: pointers, by: 2) {
      let node = Int(page.loadUnaligned(fromByteOffset: offset, as: UInt16.self))
      guard node >= upper, node < pageSize else { return false }
    }
    return true
  }

  /// Overwrites the gaps with zeros in the data file (`fd`); the caller
  /// syncs. The gaps of adjacent pages go in one `pwrite` (up to
  /// `scrubRun` pages), with the bytes between them as `file` holds them:
  /// node pointers, headers and nodes of pages in use, which nobody
  /// changes under the writer lock and a reader reads the same before,
  /// during and after (as the scrub's runs do). Half the pages of a log
  /// imported in pieces have a gap to zero (48,000 of 92,000 in
  /// `scripts/bench-forget`'s): one `pwrite` each made the scan 95–155 ms,
  /// runs 78–137 ms (of which reading the file is 33–46 ms).
  static func zeroGaps(_ gaps: [DirtyGap], in file: UnsafeRawPointer, fd: Int32, pageSize: Int) throws {
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: scrubRun * pageSize, alignment: pageSize)
    defer { buffer.deallocate() }
    var start = 0
    while start < gaps.count {
      var end = start + 1
      while end < gaps.count, gaps[end].page == gaps[end - 1].page + 1, gaps[end].page - gaps[start].page < scrubRun {
        end += 1
      }
      let from = gaps[start].page * pageSize + gaps[start].range.lowerBound
      let to = gaps[end - 1].page * pageSize + gaps[end - 1].range.upperBound
      buffer.copyMemory(from: file + from, byteCount: to - from)
      for gap in gaps[start..<end] {
        (buffer + (gap.page * pageSize + gap.range.lowerBound - from)).initializeMemory(
          as: UInt8.self, repeating: 0, count: gap.range.count)
      }
      try writeAll(fd, buffer, count: to - from, at: from)
      start = end
    }
  }

  /// Whether `count` bytes at `bytes` are all zero.
  static func isZeros(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
    if count == 0 { return true }
    // Zero first byte, and every byte equal to the one after it.
    return bytes.load(as: UInt8.self) == 0 && memcmp(bytes, bytes + 1, count - 1) == 0
  }
}
