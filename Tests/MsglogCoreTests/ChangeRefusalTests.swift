import MsglogCore
import Testing

/// A refused change's reason as outcomes keep it for good and send it: a
/// code with its data, read back into the very error (and so the very
/// words) it was; words kept by a msglog before codes stay readable.
@Suite struct ChangeRefusalTests {
  static let id = ItemID(canonical: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa")!
  static let other = ItemID(canonical: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb")!

  /// One of each error a change can be refused with.
  static let refusals: [MsglogError] = [
    .invalidInput(.emptyText), .invalidInput(.textTooLong(bytes: 1_100_000)), .invalidInput(.emptySender),
    .invalidInput(.senderTooLong(bytes: 2000)), .invalidInput(.emptyStreamName),
    .invalidInput(.streamNameTooLong(bytes: 300)), .invalidInput(.streamNameHasControl("a\u{7}b")),
    .invalidInput(.madeOutOfRange(made: .init(milliseconds: -1000), time: .init(milliseconds: 1_790_000_000_123))),
    .invalidInput(.nilReplica),
    .versionConflict(stream: "board", expected: 3, actual: 4),
    .insertOutOfRange(stream: "main", index: 9, count: 2),
    .moveOutOfRange(stream: "main", end: .to, index: 5, count: 3),
    .emptyStream("empty"), .idAlreadyUsed(id, insertSeq: 4), .itemMismatch(index: 2, found: id, expected: other),
    .noSuchItem(id, stream: "main"), .itemRemoved(id, removeSeq: 9), .itemErased(id, eraseSeq: 11),
    .itemInAnotherStream(id, home: "a", stream: "b"),
    .seqBeyondHead(seq: 12, head: 10), .itemIsLive(id, stream: "tab\tbed"), .nothingToUndo(stream: "main"),
    .alreadyUndone(seq: 3, by: 5), .noSuchEvent(seq: 30, head: 20), .undoneEventNotInLog(seq: 6),
    .eventInAnotherStream(seq: 3, home: "a", stream: "b"), .eventNotInStream(seq: 3, stream: "b"),
    .changeAppendedNothing(change: 4), .changeOutOfOrder(change: 7, done: 5),
  ]

  @Test(arguments: refusals) func aReasonRoundTripsThroughItsCodeToTheSameWords(error: MsglogError) throws {
    let refusal = try #require(ChangeRefusal(error))
    let decoded = ChangeRefusal(json: try JSONParser.parse(refusal.json), words: "unused")
    #expect(decoded == .error(error))
    #expect(decoded.description == error.description)
    #expect(ChangeRefusal(stored: String(decoding: refusal.stored, as: UTF8.self)) == .error(error))
  }

  @Test func eachReasonHasItsOwnCode() {
    let codes = Self.refusals.compactMap { ChangeRefusal($0)?.code }
    #expect(codes.count == Self.refusals.count && Set(codes).count == codes.count)
    #expect(codes.allSatisfy { $0.allSatisfy { $0.isLowercase || $0 == "-" } }, "\(codes)")
  }

  @Test func theFormIsTheCodeAndItsDataNeverWords() {
    let refusal = ChangeRefusal(.itemRemoved(Self.id, removeSeq: 9))!
    #expect(
      String(decoding: refusal.json, as: UTF8.self)
        == #"{"code":"item-removed","id":"aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa","seq":9}"#)
    #expect(String(decoding: refusal.stored, as: UTF8.self) == String(decoding: refusal.json, as: UTF8.self))
    #expect(
      String(decoding: ChangeRefusal(.invalidInput(.emptyText))!.json, as: UTF8.self) == #"{"code":"empty-text"}"#)
  }

  /// What fails a push whole has no code: it is never kept as a refusal.
  @Test func anErrorOfTheStoreOrOfACommandOnlyRefusesNoChange() {
    for error: MsglogError in [
      .storeFailure(store: .lmdb, detail: "x"), .derivedDamage(DerivedDamage(table: "ids", "x")),
      .readOnly(location: "x", store: .lmdb, reason: "y"), .noPrefixMatch(prefix: "abc", stream: "main"),
      .invalidInput(.change("\"id\" is missing")), .connectionLost(location: "x", reason: "y"),
    ] {
      #expect(ChangeRefusal(error) == nil, "\(error)")
    }
  }

  /// Kept by a msglog before codes: its words, read as they are.
  @Test func wordsKeptBeforeCodesStayReadable() {
    let words = "item aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa was already removed (at seq 9)"
    let old = ChangeRefusal(stored: words)
    #expect(old == .unknown(code: nil, words: words) && old.description == words && old.code == nil)
    #expect(ChangeRefusal(stored: String(decoding: old.stored, as: UTF8.self)) == old)
    // A code this msglog does not know, or data that does not fit its code.
    #expect(ChangeRefusal(stored: #"{"code":"item-erased","id":"x"}"#).code == "item-erased")
    #expect(
      ChangeRefusal(json: try! JSONParser.parse(#"{"code":"item-removed","id":"x","seq":1}"#), words: "w")
        == .unknown(code: "item-removed", words: "w"))
    #expect(
      ChangeRefusal(json: try! JSONParser.parse(#"{"code":"empty-text","extra":1}"#), words: "w")
        == .unknown(code: "empty-text", words: "w"), "data this msglog cannot read is not dropped silently")
  }

  /// An outcome's row (both stores keep the same bytes): a refusal by its
  /// code; a row an older msglog wrote, with the reason in words, read as those.
  @Test func anOutcomeRowKeepsTheCodeAndReadsTheWordsOfOlderRows() throws {
    let key = SyncRows.outcomeKey(3, by: Self.id)
    let refused = ChangeOutcome.refused(.error(.noSuchItem(Self.other, stream: "main")))
    for outcome in [refused, .applied(seq: 4, rebased: true), .unchanged] {
      let row = SyncRows.encode(outcome, .syncOutcomes, key: key)
      #expect(try row.withUnsafeBytes { try SyncRows.decodeOutcome(.syncOutcomes, key: key, $0) } == outcome)
    }
    let words = "no item with id bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb in stream 'main'"
    var old: [UInt8] = [3]
    old.appendBigEndian(UInt32(words.utf8.count))
    old += Array(words.utf8)
    // A reason in words is written as an older msglog wrote every one (and
    // the tests plant such rows so), and read back as those words.
    let kept = ChangeOutcome.refused(.unknown(code: nil, words: words))
    let row = SyncRows.encode(kept, .syncOutcomes, key: key)
    #expect(Array(row.dropLast(4)) == old, "the row's body, before its checksum")
    #expect(try row.withUnsafeBytes { try SyncRows.decodeOutcome(.syncOutcomes, key: key, $0) } == kept)
  }
}
