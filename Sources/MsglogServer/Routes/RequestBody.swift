import Msglog

/// A write's JSON body: one object, whose members every JSON door's writes
/// are decoded from (`Write(decoding:operation:door:defaultStream:)`).
enum RequestBody {
  static func members(_ bytes: [UInt8]) throws -> WriteMembers {
    let value: JSONValue
    do { value = try JSONParser.parse(bytes) } catch { throw HTTPError.badRequest("the body is not JSON: \(error)") }
    guard case .object(let members) = value else { throw HTTPError.badRequest("the body must be a JSON object") }
    return try WriteMembers(object: members)
  }
}
