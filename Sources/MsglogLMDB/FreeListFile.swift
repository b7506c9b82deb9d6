#if canImport(Glibc)
  import Glibc
#endif

/// LMDB's free list read from the data file itself, a page at a time with
/// pread(2), each page's number checked against the file's length before
/// it is read: never through the map, where a page past the end of a file
/// cut short faults (SIGBUS). What `Environment.lengthShortfall` tells a file
/// cut short from a sound one with, whichever of the free list's pages the
/// cut took.
///
/// LMDB 0.9's layout (`mdb.c`): a page starts with its number (8 bytes),
/// 2 bytes of padding, its flags (2), then `lower` (2): the end of its node
/// offsets, which follow the 16-byte header. A node starts with `lo`, `hi`
/// and `flags` (2 bytes each) and its key's size (2), then the key and the
/// value. In a branch, `lo | hi << 16 | flags << 32` is a child's page; in
/// a leaf `lo | hi << 16` is the value's size, and with `F_BIGDATA` the
/// value is the first of its overflow pages, which hold it past their own
/// header. A free-list value is a count, then that many page numbers, 8
/// bytes each. (The node's fields as a little-endian machine lays them
/// out: LMDB swaps `lo` and `hi` on a big-endian one.)
struct FreeListFile {
  let fd: Int32
  let pageSize: Int
  /// The pages the file holds whole.
  let heldPages: Int
  /// The commit's last page: a page number past it is damage, not a cut.
  let lastPage: Int

  /// Why the free list could not be read whole.
  enum Unreadable: Error {
    /// A page of the free list's own lies past the file's end: this one.
    case lost(page: Int)
    /// A page says what no free list of LMDB's says.
    case damaged
    /// The file could not be read (an errno).
    case failed(errno: Int32)
  }

  private static let branch: UInt16 = 0x01
  private static let leaf: UInt16 = 0x02
  private static let overflow: UInt16 = 0x04
  private static let bigData: UInt16 = 0x01

  /// Calls `body` with each page number on the free list whose tree has
  /// its root at `root`, until it returns false.
  func forEachFreePage(root: Int, _ body: (Int) -> Bool) throws {
    // No walk reads more pages than the file holds: damage that makes a
    // cycle ends.
    var budget = heldPages
    _ = try walk(root, depth: 0, budget: &budget, body)
  }

  /// Pages `first ..< first + count`, read; `lost` names the first past the end.
  private func read(_ first: Int, count: Int = 1) throws -> [UInt8] {
    guard first >= 2, count >= 1, first <= lastPage, count <= lastPage - first + 1 else { throw Unreadable.damaged }
    guard first + count <= heldPages else { throw Unreadable.lost(page: max(first, heldPages)) }
    var bytes = [UInt8](repeating: 0, count: count * pageSize)
    var done = 0
    while done < bytes.count {
      let read = bytes.withUnsafeMutableBytes {
        pread(fd, $0.baseAddress! + done, $0.count - done, off_t(first * pageSize + done))
      }
      if read < 0, errno == EINTR { continue }
      guard read >= 0 else { throw Unreadable.failed(errno: errno) }
      // Shorter than its length said a moment ago: cut meanwhile.
      guard read > 0 else { throw Unreadable.lost(page: first + done / pageSize) }
      done += read
    }
    return bytes
  }

  /// Whether to go on.
  private func walk(_ page: Int, depth: Int, budget: inout Int, _ body: (Int) -> Bool) throws -> Bool {
    budget -= 1
    guard depth < 32, budget >= 0 else { throw Unreadable.damaged }
    let bytes = try read(page)
    return try bytes.withUnsafeBytes { raw throws -> Bool in
      func u16(_ offset: Int) -> Int { Int(raw.loadUnaligned(fromByteOffset: offset, as: UInt16.self)) }
      let flags = UInt16(u16(10))
      let lower = u16(12)
      guard raw.loadUnaligned(as: UInt64.self) == UInt64(page), flags & (Self.branch | Self.leaf) != 0,
        lower >= 16, lower <= pageSize, lower % 2 == 0
      else { throw Unreadable.damaged }
      for pointer in stride(from: 16, to: lower, by: 2) {
        let node = u16(pointer)
        guard node >= lower, node + 8 <= pageSize else { throw Unreadable.damaged }
        let (lo, hi, nodeFlags, keySize) = (u16(node), u16(node + 2), u16(node + 4), u16(node + 6))
        if flags & Self.branch != 0 {
          guard try walk(lo | hi << 16 | nodeFlags << 32, depth: depth + 1, budget: &budget, body) else { return false }
          continue
        }
        let (size, value) = (lo | hi << 16, node + 8 + keySize)
        if UInt16(nodeFlags) & Self.bigData != 0 {
          guard value + 8 <= pageSize else { throw Unreadable.damaged }
          let first = Int(truncatingIfNeeded: raw.loadUnaligned(fromByteOffset: value, as: UInt64.self))
          let pages = try read(first, count: (16 + size + pageSize - 1) / pageSize)
          let going = try pages.withUnsafeBytes { pages throws -> Bool in
            guard pages.loadUnaligned(as: UInt64.self) == UInt64(first),
              pages.loadUnaligned(fromByteOffset: 10, as: UInt16.self) & Self.overflow != 0
            else { throw Unreadable.damaged }
            return try Self.pageNumbers(in: UnsafeRawBufferPointer(rebasing: pages[16..<(16 + size)]), body)
          }
          guard going else { return false }
        } else {
          guard nodeFlags == 0, value + size <= pageSize else { throw Unreadable.damaged }
          guard try Self.pageNumbers(in: UnsafeRawBufferPointer(rebasing: raw[value..<(value + size)]), body)
          else { return false }
        }
      }
      return true
    }
  }

  /// A free-list value's page numbers, to `body`; whether to go on.
  private static func pageNumbers(in value: UnsafeRawBufferPointer, _ body: (Int) -> Bool) throws -> Bool {
    guard value.count >= 8 else { throw Unreadable.damaged }
    let count = Int(truncatingIfNeeded: value.loadUnaligned(as: UInt64.self))
    guard count >= 0, count < value.count / 8 else { throw Unreadable.damaged }
    for i in stride(from: 1, through: count, by: 1) {
      guard body(Int(truncatingIfNeeded: value.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))) else {
        return false
      }
    }
    return true
  }
}
