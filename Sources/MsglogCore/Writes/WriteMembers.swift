/// The members of one write's JSON object by name, remembering which were
/// read: what every door's input becomes before the decoder
/// (`Write(decoding:operation:door:defaultStream:)`) — an import line by
/// the byte scanner or the general parser, an HTTP body by the parser, the
/// command line's arguments set one by one.
///
/// On the stack: two arrays per line were two allocations per import line.
package struct WriteMembers {
  /// A member's value, as far as a write cares.
  package enum Value {
    case string(String)
    /// An integer in 0…2^63-1; nil for any other number.
    case number(UInt64?)
    /// A string that is a canonical UUID (read without making a String).
    case uuid(ItemID)
    /// A string that is an RFC 3339 timestamp.
    case timestamp(Timestamp)
    case bool(Bool)
    /// Anything else (null, an array, an object), by its kind: "null", "an object".
    case other(kind: String)

    /// What kind of value it is, for messages ("a number").
    var kind: String {
      switch self {
      case .string, .uuid, .timestamp: "a string"
      case .number: "a number"
      case .bool: "a boolean"
      case .other(let kind): kind
      }
    }
  }

  private var values = InlineArray<16, Value?>(repeating: nil)
  /// Which members are present, and which of them were read.
  package private(set) var present = WriteMemberSet()
  private(set) var read = WriteMemberSet()
  /// The stream, when the scanner found it to be the previous line's.
  var knownStream: StreamName? = nil

  package init() {
    precondition(WriteMember.allCases.count <= 16, "a write's members fit in 16 places")
  }

  /// The members of a JSON object; a name no write has is refused.
  ///
  /// - Parameter skipping: names of members the door reads itself.
  package init(object members: [(String, JSONValue)], skipping: Set<String> = []) throws(MsglogError) {
    self.init()
    for (name, member) in members {
      guard let key = WriteMember(name) else {
        if skipping.contains(name) { continue }
        throw .invalidInput(.write("unknown member \"\(name)\""))
      }
      switch member {
      case .string(let s): set(key, .string(s))
      case .number(let text): set(key, .number(Limits.parseNumber(text)))
      case .bool(let b): set(key, .bool(b))
      default: set(key, .other(kind: member.kindName))
      }
    }
  }

  /// A member's value, until it is read.
  package subscript(_ member: WriteMember) -> Value? { values[member.rawValue] }

  /// Gives a member its value (the last one given stands).
  @inline(__always)
  package mutating func set(_ member: WriteMember, _ value: Value) {
    present.insert(member)
    values[member.rawValue] = value
  }

  // MARK: - Reading by type

  // Each member is read once at most: a read takes its value out (no copy).

  @inline(__always)
  package mutating func string(_ member: WriteMember) throws(MsglogError) -> String? {
    guard let value = values[member.rawValue].take() else { return nil }
    read.insert(member)
    switch value {
    case .string(let s): return s
    case .uuid(let id): return id.text
    case .timestamp(let time): return time.rfc3339
    default: throw Self.notAString(member, value)
    }
  }

  @inline(__always)
  package mutating func number(_ member: WriteMember) throws(MsglogError) -> UInt64? {
    guard let value = values[member.rawValue].take() else { return nil }
    read.insert(member)
    switch value {
    case .number(let n?): return n
    case .number(nil): throw .invalidInput(.write("\(member.quoted) must be a whole number from 0 to 2^63-1"))
    default:
      throw .invalidInput(.write("\(member.quoted) must be a whole number from 0 to 2^63-1, not \(value.kind)"))
    }
  }

  @inline(__always)
  package mutating func bool(_ member: WriteMember) throws(MsglogError) -> Bool? {
    guard let value = values[member.rawValue].take() else { return nil }
    read.insert(member)
    guard case .bool(let b) = value else {
      throw .invalidInput(.write("\(member.quoted) must be true or false, not \(value.kind)"))
    }
    return b
  }

  /// A UUID (a new item's id; the item a move names).
  @inline(__always)
  mutating func uuid(_ member: WriteMember) throws(MsglogError) -> ItemID? {
    guard let value = values[member.rawValue].take() else { return nil }
    read.insert(member)
    switch value {
    case .uuid(let id): return id
    case .string(let text): return try ItemID(validating: text)
    default: throw Self.notAString(member, value)
    }
  }

  /// An item of the stream: a UUID or a prefix of one.
  @inline(__always)
  mutating func selector(_ member: WriteMember) throws(MsglogError) -> ItemSelector? {
    guard let value = values[member.rawValue].take() else { return nil }
    read.insert(member)
    switch value {
    case .uuid(let id): return .id(id)
    case .string(let text): return try ItemSelector(parsing: text)
    default: throw Self.notAString(member, value)
    }
  }

  @inline(__always)
  mutating func stream() throws(MsglogError) -> StreamName? {
    if let knownStream {
      read.insert(.stream)
      return knownStream
    }
    return try string(.stream).map { name throws(MsglogError) in try StreamName(validating: name) }
  }

  @inline(__always)
  mutating func time() throws(MsglogError) -> Timestamp? {
    guard let value = values[WriteMember.time.rawValue].take() else { return nil }
    read.insert(.time)
    switch value {
    case .timestamp(let time): return time
    case .string(let text):
      guard let parsed = Timestamp(rfc3339: text) else {
        throw .invalidInput(.write("\"time\" is not an RFC 3339 timestamp: \(TerminalText.quoted(text))"))
      }
      return parsed
    default: throw Self.notAString(.time, value)
    }
  }

  static func notAString(_ member: WriteMember, _ value: Value) -> MsglogError {
    .invalidInput(.write("\(member.quoted) must be a string, not \(value.kind)"))
  }
}
