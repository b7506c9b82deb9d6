import CLMDB
import MsglogCore

extension LMDBTables {
  /// `LogReader`/`LogWriter` over one transaction.
  final class LogTransaction: LogWriter {
    let tables: LMDBTables
    let txn: Transaction
    /// A rebuild in this transaction wrote the derived tables in the current format.
    var rebuiltInFormat = false
    /// Whether a bulk load may commit a piece when it has put `pieceBytes` (see `write`).
    let inPieces: Bool
    /// What the bulk load put since the last piece, and through how many cursors now open.
    var bytesInPiece = 0
    var loadingCursors = 0
    /// The container's version as this transaction last read or wrote it.
    var containerVersion: Int?
    /// The log's horizon as this transaction last read or wrote it: every
    /// walk of the log and every count asks (`LMDBTables+Trim`).
    var knownHorizon: Horizon?
    /// How many records this transaction wrote again (`replaceRecord`), and
    /// whether one of them may have split its page.
    var replacedRecords = 0
    var replacementMaySplit = false
    /// Where the data file is mapped (`replaceRecord`: a value read there
    /// is in a page this transaction has not changed).
    var dataFileMap: [Range<UInt>]?

    init(tables: LMDBTables, txn: Transaction, inPieces: Bool = false) {
      self.tables = tables
      self.txn = txn
      self.inPieces = inPieces
    }
  }
}

extension LMDBTables.LogTransaction {
  /// A table opened when first needed (named tokens', sync's); nil when
  /// it does not exist and `create` is false. A table another transaction
  /// of this process opened after this one began is not this one's to use:
  /// `TableOpenedSince`, and the read or write runs again.
  func tableOpenedWhenNeeded(_ name: String, create: Bool) throws -> Database? {
    if let db = txn.openedTable(name) { return db }
    if let db = tables.environment.openedTable(name) {
      guard txn.knows(db) else { throw TableOpenedSince() }
      return db
    }
    // A table that does not exist is found so without opening anything
    // (and without the lock that opening takes): a tokenless log's every
    // request asks.
    if !create, try !txn.hasTable(name) { return nil }
    return try txn.openTable(name, create: create, sharing: true)
  }
}
