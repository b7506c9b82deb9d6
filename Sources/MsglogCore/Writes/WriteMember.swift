#if canImport(Glibc)
  import Glibc
#endif

/// A member of a write's JSON object, by the name every JSON door gives it
/// (an HTTP body, an import line and, next, a replica's pushed change): the
/// one list of names, in alphabetical order, which is the order an unread
/// one is reported in. Which operation reads which, of which type, is
/// `WriteOperation`'s declaration; which members a door adds to every
/// write is `WriteDoor`'s.
///
/// A door with a member of its own (sync's `origin`) reads it from its
/// object itself and leaves it out of the decoded members
/// (`WriteMembers(object:skipping:)`).
package enum WriteMember: Int, CaseIterable, Sendable {
  case edit, erased, expectVersion, from, id, index, op, rebase, seq, sender, stream, text, time, to, undoes, version

  package var name: String {
    switch self {
    case .edit: "edit"
    case .erased: "erased"
    case .expectVersion: "expectVersion"
    case .from: "from"
    case .id: "id"
    case .index: "index"
    case .op: "op"
    case .rebase: "rebase"
    case .seq: "seq"
    case .sender: "sender"
    case .stream: "stream"
    case .text: "text"
    case .time: "time"
    case .to: "to"
    case .undoes: "undoes"
    case .version: "version"
    }
  }

  /// The member a name read from a line's bytes stands for: by its length
  /// first, so that a line's keys cost a compare or two each.
  init?(_ name: UnsafeRawBufferPointer) {
    func equals(_ text: StaticString) -> Bool {
      name.count == text.utf8CodeUnitCount && memcmp(name.baseAddress!, text.utf8Start, name.count) == 0
    }
    switch name.count {
    case 2:
      if equals("op") {
        self = .op
      } else if equals("id") {
        self = .id
      } else if equals("to") {
        self = .to
      } else {
        return nil
      }
    case 3: if equals("seq") { self = .seq } else { return nil }
    case 4:
      if equals("edit") {
        self = .edit
      } else if equals("text") {
        self = .text
      } else if equals("time") {
        self = .time
      } else if equals("from") {
        self = .from
      } else {
        return nil
      }
    case 5: if equals("index") { self = .index } else { return nil }
    case 6:
      if equals("stream") {
        self = .stream
      } else if equals("sender") {
        self = .sender
      } else if equals("undoes") {
        self = .undoes
      } else if equals("erased") {
        self = .erased
      } else if equals("rebase") {
        self = .rebase
      } else {
        return nil
      }
    case 7: if equals("version") { self = .version } else { return nil }
    case 13: if equals("expectVersion") { self = .expectVersion } else { return nil }
    default: return nil
    }
  }

  package init?(_ name: String) {
    var name = name
    guard let member = name.withUTF8({ WriteMember(UnsafeRawBufferPointer($0)) }) else { return nil }
    self = member
  }

  /// `"text"`: how a JSON door's messages name it.
  package var quoted: String { "\"\(name)\"" }
}

/// A set of members, one bit each: which a write has, which were read.
package struct WriteMemberSet: Equatable, Sendable {
  package private(set) var bits: UInt32 = 0

  package init() {}

  package init(_ members: [WriteMember]) {
    for member in members { insert(member) }
  }

  @inline(__always)
  package func contains(_ member: WriteMember) -> Bool { bits & (1 << member.rawValue) != 0 }
  @inline(__always)
  package mutating func insert(_ member: WriteMember) { bits |= 1 << member.rawValue }
  @inline(__always)
  package var isEmpty: Bool { bits == 0 }

  @inline(__always)
  package func union(_ other: WriteMemberSet) -> WriteMemberSet { WriteMemberSet(bits: bits | other.bits) }
  @inline(__always)
  package func subtracting(_ other: WriteMemberSet) -> WriteMemberSet { WriteMemberSet(bits: bits & ~other.bits) }

  /// The first member in alphabetical order (the order messages report in).
  package var first: WriteMember? { bits == 0 ? nil : WriteMember(rawValue: bits.trailingZeroBitCount) }

  /// The members, in alphabetical order.
  package var members: [WriteMember] { WriteMember.allCases.filter(contains) }

  private init(bits: UInt32) { self.bits = bits }
}
