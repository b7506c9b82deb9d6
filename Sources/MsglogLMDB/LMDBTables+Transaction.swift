import CLMDB
import MsglogCore

extension LMDBTables {
  /// `LogReader`/`LogWriter` over one transaction.
  final class LogTransaction: LogWriter {
    let tables: LMDBTables
    let txn: Transaction
    /// A rebuild in this transaction wrote the derived tables in the current format.
    var rebuiltInFormat = false
    /// Sync's tables this transaction opened (valid for others once it commits).
    var openedTables: [String: Database] = [:]

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
