/// The version a store writes on its container — an LMDB environment's
/// `meta` format (`msglog/3`), a PostgreSQL schema (`2`) — and the one rule
/// both stores follow with it:
///
/// - a new container starts at a version below `holdingNewRecords`, so
///   that an older msglog keeps reading a log without the newer events;
/// - the transaction that appends the log's first record of record format 2
///   (an edit, a restore, an undo: `EventRecord.formatVersion2`) moves the
///   container to `holdingNewRecords`, so that an older msglog refuses the
///   log instead of misreading it;
/// - a version in `readable` is read; a newer one is refused as written by
///   a newer msglog (`MsglogError.newerFormat`); anything else is not msglog's.
///
/// A store adds versions of its own for other reasons (a new table) by
/// widening `readable`; `holdingNewRecords` stays where records of format 2
/// first became possible.
package struct ContainerFormat: Sendable {
  /// How a version is stored: `msglog/` gives `msglog/3`, an empty prefix `2`.
  package let storedPrefix: String
  /// How a version is named in messages: `msglog/3`, `schema 2`.
  package let shownPrefix: String
  /// The versions this msglog reads (and writes the newest of).
  package let readable: ClosedRange<Int>
  /// The first version whose containers may hold records of format 2.
  package let holdingNewRecords: Int

  package init(storedPrefix: String, shownPrefix: String, readable: ClosedRange<Int>, holdingNewRecords: Int) {
    precondition(readable.contains(holdingNewRecords))
    self.storedPrefix = storedPrefix
    self.shownPrefix = shownPrefix
    self.readable = readable
    self.holdingNewRecords = holdingNewRecords
  }

  /// The newest version this msglog knows.
  package var newest: Int { readable.upperBound }

  /// `version` as the container stores it.
  package func stored(_ version: Int) -> String { storedPrefix + String(version) }

  /// `version` as messages name it.
  package func shown(_ version: Int) -> String { shownPrefix + String(version) }

  /// The version a container's stored value names, when this msglog reads
  /// it; nil when the value is missing or no msglog's version (the store
  /// says how, in its own words).
  ///
  /// - Throws: `MsglogError.newerFormat` for a version past `newest`.
  package func version(of value: String?, location: String) throws(MsglogError) -> Int? {
    guard let value else { return nil }
    if let known = readable.first(where: { stored($0) == value }) { return known }
    if value.hasPrefix(storedPrefix), let found = Int(value.dropFirst(storedPrefix.count)), found > newest {
      throw .newerFormat(location: location, found: shown(found), known: shown(newest))
    }
    return nil
  }

  /// Whether a container at `version` may hold records of format 2.
  package func holdsNewRecords(_ version: Int) -> Bool { version >= holdingNewRecords }

  /// The version a container moves to before `record` is appended to it;
  /// nil when it stays where it is. `version` is the container's (asked
  /// only when the record's format matters), or nil when the caller has
  /// not read it (the store then writes the new version unless the
  /// container already says it, or a newer one).
  package func upgrade(appending record: UnsafeRawBufferPointer, at version: @autoclosure () -> Int?) -> Int? {
    guard record.first == EventRecord.formatVersion2 else { return nil }
    if let version = version(), holdsNewRecords(version) { return nil }
    return holdingNewRecords
  }

  package func upgrade(appending record: [UInt8], at version: @autoclosure () -> Int?) -> Int? {
    record.withUnsafeBytes { upgrade(appending: $0, at: version()) }
  }
}
