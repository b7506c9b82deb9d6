import Testing

@testable import MsglogCore

/// The one rule both stores follow with their container's version: a
/// record of format 2 moves it to `holdingNewRecords`, a newer version is
/// refused as a newer msglog's, anything else is not msglog's.
@Suite struct ContainerFormatTests {
  /// Shaped as LMDB's (`msglog/1`…`msglog/3`) and as PostgreSQL's (`1`, `2`, shown as `schema 2`).
  static let lmdb = ContainerFormat(
    storedPrefix: "msglog/", shownPrefix: "msglog/", readable: 1...3, holding: [EventRecord.formatVersion2: 3])
  static let postgres = ContainerFormat(
    storedPrefix: "", shownPrefix: "schema ", readable: 1...2, holding: [EventRecord.formatVersion2: 2])

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
    for unknown in [nil, "", "msglog/0", "msglog/03", "msglog/04", "msglog/+4", "msglog", "sqlite/3", "msglog/x"] {
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
    // Past any Int: still a newer msglog's version, not another program's data.
    let huge = "99999999999999999999999"
    #expect(
      throws: MsglogError.newerFormat(location: "db", found: "msglog/" + huge.prefix(20) + "…", known: "msglog/3")
    ) {
      try Self.lmdb.version(of: "msglog/" + huge, location: "db")
    }
  }

  @Test func aRecordOfFormatTwoMovesTheContainerOnOnce() {
    #expect(Self.edit.first == EventRecord.formatVersion2)
    for format in [Self.lmdb, Self.postgres] {
      let holdingNewRecords = format.firstVersion(holding: EventRecord.formatVersion2)!
      #expect(format.upgrade(appending: Self.insert, at: nil) == nil)
      #expect(format.upgrade(appending: Self.insert, at: 1) == nil)
      #expect(format.upgrade(appending: Self.edit, at: nil) == holdingNewRecords)
      #expect(format.upgrade(appending: Self.edit, at: holdingNewRecords - 1) == holdingNewRecords)
      #expect(format.upgrade(appending: Self.edit, at: holdingNewRecords) == nil)
      #expect(format.upgrade(appending: Self.edit, at: format.newest) == nil)
    }
  }
}

extension ContainerFormatTests {
  /// LMDB's as msglog writes it: a replica's event (record format 3, with
  /// its origin) moves the container to msglog/4, an edit to msglog/3, and
  /// an edit never moves a msglog/4 back.
  @Test func eachRecordFormatHasTheFirstVersionThatHoldsIt() {
    let format = ContainerFormat(
      storedPrefix: "msglog/", shownPrefix: "msglog/", readable: 1...4,
      holding: [EventRecord.formatVersion2: 3, EventRecord.formatVersion3: 4])
    let fromReplica = EventRecord.encode(
      Event(
        seq: 3, stream: "main", version: 3, time: Timestamp(milliseconds: 0),
        op: .insert(id: Self.id, index: 0, text: "c", sender: nil),
        origin: Origin(replica: Self.id, change: 1, made: Timestamp(milliseconds: 0))))
    #expect(fromReplica.first == EventRecord.formatVersion3)
    #expect(format.upgrade(appending: fromReplica, at: 2) == 4)
    #expect(format.upgrade(appending: fromReplica, at: 3) == 4)
    #expect(format.upgrade(appending: fromReplica, at: 4) == nil)
    #expect(format.upgrade(appending: Self.edit, at: 4) == nil)
    #expect(format.upgrade(appending: Self.edit, at: 2) == 3)
    #expect(format.upgrade(appending: [9, 0, 0], at: 1) == nil)
  }
}
