extension PostgresStore.Access {
  /// The sizes of the pages a range is read in: `first`, then each page
  /// `growth` times the one before, up to `largest`.
  struct Pages {
    var first: Int
    var growth = 1
    var largest: Int

    /// Pages of one size.
    static func of(_ size: Int) -> Pages { Pages(first: size, largest: size) }
  }

  /// Reads a range of `table` page by page, each page a statement of its
  /// own (so that writes can go in between, as a rebuild's do).
  ///
  /// `page(limit)` is the statement of the next page, from where the rows
  /// before left off (the caller keeps its place in `body`); `body` takes
  /// each row, and returns false to stop. A page shorter than asked for is
  /// the last.
  func forEachRow(
    of table: PostgresStore.WriteBuffer.Table, in pages: Pages, _ page: (_ limit: Int) -> Statement,
    _ body: (Rows, Int) throws -> Bool
  ) throws {
    var limit = pages.first
    while true {
      let rows = try query(table, page(limit))
      for row in 0..<rows.count {
        guard try body(rows, row) else { return }
      }
      if rows.count < limit { return }
      limit = min(limit * pages.growth, pages.largest)
    }
  }
}
