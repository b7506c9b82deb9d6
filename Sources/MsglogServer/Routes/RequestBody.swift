import Msglog

/// A write's JSON body: an object of known members, each of one type.
struct RequestBody {
  private var members: [String: JSONValue] = [:]
  private var used: Set<String> = []

  init(_ bytes: [UInt8]) throws(HTTPError) {
    let value: JSONValue
    do { value = try JSONParser.parse(bytes) } catch { throw .badRequest("the body is not JSON: \(error)") }
    guard case .object(let pairs) = value else { throw .badRequest("the body must be a JSON object") }
    for (key, value) in pairs { members[key] = value }
  }

  mutating func string(_ key: String) throws(HTTPError) -> String? {
    used.insert(key)
    switch members[key] {
    case nil, .null?: return nil
    case .string(let text)?: return text
    default: throw .badRequest("\"\(key)\" must be a string")
    }
  }

  mutating func number(_ key: String) throws(HTTPError) -> UInt64? {
    used.insert(key)
    switch members[key] {
    case nil, .null?: return nil
    // The command line's numbers (Limits.parseNumber): 0 to 2^63-1.
    case .number(let text)?:
      guard let value = Limits.parseNumber(text) else {
        throw .badRequest("\"\(key)\" must be a whole number from 0 to 2^63-1")
      }
      return value
    default: throw .badRequest("\"\(key)\" must be a whole number from 0 to 2^63-1")
    }
  }

  mutating func bool(_ key: String) throws(HTTPError) -> Bool? {
    used.insert(key)
    switch members[key] {
    case nil, .null?: return nil
    case .bool(let value)?: return value
    default: throw .badRequest("\"\(key)\" must be true or false")
    }
  }

  func required<T>(_ value: T?, _ key: String) throws(HTTPError) -> T {
    guard let value else { throw .badRequest("\"\(key)\" is missing") }
    return value
  }

  mutating func stream() throws -> StreamName {
    guard let name = try string("stream") else { return .main }
    return try StreamName(validating: name)
  }

  /// Refuses members no route reads (a typo must not be ignored).
  func finish() throws(HTTPError) {
    if let unknown = members.keys.sorted().first(where: { !used.contains($0) }) {
      throw .badRequest("unknown member \"\(unknown)\"")
    }
  }
}
