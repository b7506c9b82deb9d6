import Testing

@testable import MsglogCore

/// The one rule both stores follow with their container's version: a
/// record of format 2 moves it to `holdingNewRecords`, a newer version is
/// refused as a newer msglog's, anything else is not msglog's.
@Suite struct ContainerFormatTests {
  /// Shaped as LMDB's (`msglog/1`…`msglog/3`) and as PostgreSQL's (`1`, `2`, shown as `schema 2`).
  static let lmdb = ContainerFormat(
    storedPrefix: "msglog/", shownPrefix: "msglog/", readable: 1...3, holdingNewRecords: 3)
  static let postgres = ContainerFormat(storedPrefix: "", shownPrefix: "schema ", readable: 1...2, holdingNewRecords: 2)

  static let id = ItemID(canonical: "3f2a1b4c-0000-4000-8000-00000000abcd")!
  static let insert = EventRecord.encode(
    Event(
      seq: 1, stream: "main", version: 1, time: Timestamp(milliseconds: 0),
      op: .insert(id: id, index: 0, text: "a", sender: nil)))
  static let edit = EventRecord.encode(
    Event(
      seq: 2, stream: "main", version: 2, time: Timestamp(milliseconds: 0),
      op: .edit(id: id, text: "b", sender: nil, index: 0, replaces: 1, inserted: 1)))

  @Test func readsTheVersionsItKnowsExactly() throws {
    #expect(try Self.lmdb.version(of: "msglog/1", location: "x") == 1)
    #expect(try Self.lmdb.version(of: "msglog/3", location: "x") == 3)
    #expect(try Self.postgres.version(of: "2", location: "x") == 2)
    for unknown in [nil, "", "msglog/0", "msglog/03", "msglog", "sqlite/3", "msglog/x"] {
      #expect(try Self.lmdb.version(of: unknown, location: "x") == nil, "\(unknown ?? "nil")")
    }
    for unknown in [nil, "0", "none", "two", "02"] {
      #expect(try Self.postgres.version(of: unknown, location: "x") == nil, "\(unknown ?? "nil")")
    }
  }

  @Test func refusesANewerVersionInEachStoresWords() {
    #expect(throws: MsglogError.newerFormat(location: "db", found: "msglog/4", known: "msglog/3")) {
      try Self.lmdb.version(of: "msglog/4", location: "db")
    }
    #expect(throws: MsglogError.newerFormat(location: "pg", found: "schema 3", known: "schema 2")) {
      try Self.postgres.version(of: "3", location: "pg")
    }
  }

  @Test func aRecordOfFormatTwoMovesTheContainerOnOnce() {
    #expect(Self.edit.first == EventRecord.formatVersion2)
    for format in [Self.lmdb, Self.postgres] {
      #expect(format.upgrade(appending: Self.insert, at: nil) == nil)
      #expect(format.upgrade(appending: Self.insert, at: 1) == nil)
      #expect(format.upgrade(appending: Self.edit, at: nil) == format.holdingNewRecords)
      #expect(format.upgrade(appending: Self.edit, at: format.holdingNewRecords - 1) == format.holdingNewRecords)
      #expect(format.upgrade(appending: Self.edit, at: format.holdingNewRecords) == nil)
      #expect(format.upgrade(appending: Self.edit, at: format.newest) == nil)
    }
  }
}
