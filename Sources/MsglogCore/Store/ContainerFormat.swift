/// The version a store writes on its container — an LMDB environment's
/// `meta` format (`msglog/3`), a PostgreSQL schema (`2`) — and the one rule
/// both stores follow with it:
///
/// - a new container starts at a version that holds only records of
///   format 1, so that an older msglog keeps reading a log without the
///   newer events;
/// - the transaction that appends the log's first record of a newer record
///   format (2: an edit, a restore, an undo, `EventRecord.formatVersion2`;
///   3: an event with its origin, from a replica, `formatVersion3`) moves
///   the container to the first version that holds it (`holding`), so that
///   an older msglog refuses the log instead of misreading it;
/// - a version in `readable` is read; a newer one is refused as written by
///   a newer msglog (`MsglogError.newerFormat`); anything else is not msglog's.
///
/// A store adds versions of its own for other reasons (a new table) by
/// widening `readable`; `holding` keeps where each record format first
/// became possible.
package struct ContainerFormat: Sendable {
  /// How a version is stored: `msglog/` gives `msglog/3`, an empty prefix `2`.
  package let storedPrefix: String
  /// How a version is named in messages: `msglog/3`, `schema 2`.
  package let shownPrefix: String
  /// The versions this msglog reads (and writes the newest of).
  package let readable: ClosedRange<Int>
  /// For each record format after 1, the first version whose containers
  /// may hold records of it.
  package let holding: [UInt8: Int]

  package init(storedPrefix: String, shownPrefix: String, readable: ClosedRange<Int>, holding: [UInt8: Int]) {
    precondition(holding.values.allSatisfy(readable.contains))
    self.storedPrefix = storedPrefix
    self.shownPrefix = shownPrefix
    self.readable = readable
    self.holding = holding
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
    guard value.hasPrefix(storedPrefix) else { return nil }
    let digits = value.dropFirst(storedPrefix.count)
    // A version as msglog writes one (digits, no leading zero), past the
    // newest — or past any Int, which no older msglog wrote either.
    guard let first = digits.first, first != "0", digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
    if Int(digits).map({ $0 > newest }) ?? true {
      // Said in a message and an answer's body: a version as long as any Int at most.
      let said = digits.count > 20 ? digits.prefix(20) + "…" : digits
      throw .newerFormat(location: location, found: shownPrefix + said, known: shown(newest))
    }
    return nil
  }

  /// The first version that may hold records of record format `format`;
  /// nil for a format every version holds (1) or none does (a newer one).
  package func firstVersion(holding format: UInt8) -> Int? { holding[format] }

  /// The version a container moves to before `record` is appended to it;
  /// nil when it stays where it is. `version` is the container's (asked
  /// only when the record's format matters), or nil when the caller has
  /// not read it (the store then writes the new version unless the
  /// container already says it, or a newer one).
  package func upgrade(appending record: UnsafeRawBufferPointer, at version: @autoclosure () -> Int?) -> Int? {
    guard let format = record.first, let needed = holding[format] else { return nil }
    if let version = version(), version >= needed { return nil }
    return needed
  }

  package func upgrade(appending record: [UInt8], at version: @autoclosure () -> Int?) -> Int? {
    record.withUnsafeBytes { upgrade(appending: $0, at: version()) }
  }
}
