#if canImport(Glibc)
  import Glibc
#endif

/// One of LMDB's two meta pages (0 and 1), read from the data file with
/// pread(2), not through a map: what the checks at opening
/// (`DatabaseFiles.checkDataFile`) and a write's length check
/// (`Environment.lengthShortfall`) read of a file that may be cut short.
///
/// LMDB 0.9's `MDB_meta` after the 16-byte page header (64-bit): the magic
/// at byte 16, the data version at 20, the page size at 40 (the free
/// list's `md_pad`), the free list's root at 80, the main database's root
/// at 128, the last page at 136, the transaction id at 144.
struct MetaPage {
  static let magic: UInt32 = 0xBEEF_C0DE
  static let dataVersion: UInt32 = 1
  /// The bytes read: up to the transaction id.
  static let size = 152

  let pageSize: Int
  /// The free list's root page; nil when the free list is empty.
  let freeListRoot: UInt64?
  /// The main database's root page; nil when it is empty.
  let mainRoot: UInt64?
  /// The last page the commit counts (allocated, if not all written).
  let lastPage: UInt64
  let transaction: UInt64

  /// The meta page at byte `offset` of the file `fd`; nil when the file
  /// does not hold it whole or it is not LMDB's.
  static func read(_ fd: Int32, at offset: Int) -> MetaPage? {
    var page = [UInt8](repeating: 0, count: size)
    guard page.withUnsafeMutableBytes({ pread(fd, $0.baseAddress, size, off_t(offset)) }) == size else { return nil }
    return page.withUnsafeBytes { raw in
      func word(_ offset: Int) -> UInt64 { raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self) }
      func root(_ offset: Int) -> UInt64? { word(offset) == UInt64.max ? nil : word(offset) }
      guard raw.loadUnaligned(fromByteOffset: 16, as: UInt32.self) == magic,
        raw.loadUnaligned(fromByteOffset: 20, as: UInt32.self) == dataVersion
      else { return nil }
      return MetaPage(
        pageSize: Int(raw.loadUnaligned(fromByteOffset: 40, as: UInt32.self)), freeListRoot: root(80),
        mainRoot: root(128), lastPage: word(136), transaction: word(144))
    }
  }
}
