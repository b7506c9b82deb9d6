import MsglogCore

/// An answer of a remote that is not what the protocol's message is: the
/// remote's fault (a replica refuses it as an incompatible remote's).
package enum AnswerProblem: Error, Equatable, Sendable {
  /// The answer is not a JSON object.
  case notAnObject
  case helloWithoutProtocol
  case pushWithoutHeadOrOutcomes
  case outcomeNotAnObject
  case appliedWithoutSeq
  /// An outcome's `result` is neither applied, unchanged nor refused.
  case unknownResult
}

/// A remote's JSON object, its members read leniently by name (what an
/// older or newer remote adds or leaves out is no fault).
struct AnswerMembers {
  private var members: [String: JSONValue] = [:]

  init(_ body: [UInt8]) throws(AnswerProblem) {
    guard let value = try? JSONParser.parse(body), let members = AnswerMembers(value) else { throw .notAnObject }
    self = members
  }

  init?(_ value: JSONValue) {
    guard case .object(let pairs) = value else { return nil }
    for (key, value) in pairs { members[key] = value }
  }

  subscript(_ key: String) -> JSONValue? { members[key] }

  func string(_ key: String) -> String? {
    if case .string(let text)? = members[key] { return text }
    return nil
  }

  func integer(_ key: String) -> Int? {
    if case .number(let text)? = members[key], let value = Limits.parseNumber(text) { return Int(value) }
    return nil
  }

  func bool(_ key: String) -> Bool? {
    if case .bool(let flag)? = members[key] { return flag }
    return nil
  }
}
