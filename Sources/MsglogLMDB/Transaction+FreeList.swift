import CLMDB

extension Transaction {
  /// Every page on LMDB's free list, with the transaction that freed it,
  /// read through the map (purge's scrub, in a file whose pages are all
  /// there; `FreeListFile` reads one that may lack some). Only a read
  /// transaction may open the free list (LMDB's `FREE_DBI`, slot 0): its
  /// keys are transaction ids, its values a count of pages and then their
  /// numbers, 8 bytes each.
  func forEachFreePage(_ body: (_ page: Int, _ freedIn: UInt64) throws -> Void) throws {
    precondition(isReadOnly, "LMDB opens its free list to a read transaction only")
    try withCursor(Database(dbi: 0)) { cursor in
      var entry = try cursor.first()
      while let (key, value) = entry {
        guard key.count == 8, value.count >= 8 else { throw LMDBError(LMDBError.corrupted, "the free list") }
        let freedIn = key.loadUnaligned(as: UInt64.self)
        let count = Int(truncatingIfNeeded: value.loadUnaligned(as: UInt64.self))
        guard count >= 0, count < value.count / 8 else { throw LMDBError(LMDBError.corrupted, "the free list") }
        for i in stride(from: 1, through: count, by: 1) {
          try body(Int(truncatingIfNeeded: value.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)), freedIn)
        }
        entry = try cursor.next()
      }
    }
  }
}
