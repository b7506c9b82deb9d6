import MsglogCore

/// A remote's answer to a push: its head after it, and one outcome per
/// change pushed, in order — `{"head","outcomes":[…]}`, each outcome
/// `{"change":N,"result":"applied","seq":S,"rebased":b}`,
/// `{"change":N,"result":"unchanged"}` or
/// `{"change":N,"result":"refused","reason":{"code":…},"error":"…"}`.
///
/// A refusal's `reason` is its code and data (`ChangeRefusal`), what a
/// replica keeps and switches on; `error` is the same in the remote's
/// words, for a person, and for a replica from before reasons had codes
/// (which reads only that). An outcome kept in words only, by a remote
/// from before codes, is sent with its `error` alone.
public struct PushAnswer: Equatable, Sendable {
  /// Its head after the push.
  public var head: UInt64
  /// One per change pushed, in order.
  public var outcomes: [ChangeOutcome]
  /// The change each outcome names (`"change"`), in order; nil where it
  /// names none. A replica checks them against what it pushed.
  package var numbers: [UInt64?] = []
  /// How many of the first outcomes are of changes done before, sent
  /// again (a lost answer): the remote's own count, not on the wire.
  package var resent = 0

  public init(head: UInt64, outcomes: [ChangeOutcome]) {
    self.head = head
    self.outcomes = outcomes
  }

  package init(head: UInt64, outcomes: [ChangeOutcome], resent: Int) {
    self.init(head: head, outcomes: outcomes)
    self.resent = resent
  }

  /// The same answer: its head and outcomes (a resend's is the first's).
  public static func == (a: PushAnswer, b: PushAnswer) -> Bool { a.head == b.head && a.outcomes == b.outcomes }

  /// The answer to `request`, its outcomes numbered by the changes pushed,
  /// a refusal worded by `words` (the remote's words, for a person).
  package func json(answering request: PushRequest, words: (ChangeRefusal) -> String) -> [UInt8] {
    var json = JSONWriter()
    json.object { json in
      json.member("head", head)
      json.key("outcomes")
      json.array { json in
        for (change, outcome) in zip(request.changes, outcomes) {
          json.object { json in
            json.member("change", change.number)
            switch outcome {
            case .applied(let seq, let rebased):
              json.member("result", "applied")
              json.member("seq", seq)
              json.member("rebased", rebased)
            case .unchanged:
              json.member("result", "unchanged")
            case .refused(let reason):
              json.member("result", "refused")
              if reason.code != nil {
                json.key("reason")
                reason.write(to: &json)
              }
              json.member("error", words(reason))
            }
          }
        }
      }
    }
    return json.take()
  }

  /// Reads a remote's answer to a push, leniently as to what it adds.
  package init(json body: [UInt8]) throws(AnswerProblem) {
    let members = try AnswerMembers(body)
    guard let head = members.integer("head"), case .array(let items)? = members["outcomes"] else {
      throw .pushWithoutHeadOrOutcomes
    }
    var outcomes: [ChangeOutcome] = []
    var numbers: [UInt64?] = []
    for item in items {
      guard let outcome = AnswerMembers(item) else { throw .outcomeNotAnObject }
      numbers.append(outcome.integer("change").map { UInt64($0) })
      switch outcome.string("result") {
      case "applied"?:
        guard let seq = outcome.integer("seq") else { throw .appliedWithoutSeq }
        outcomes.append(.applied(seq: UInt64(seq), rebased: outcome.bool("rebased") ?? false))
      case "unchanged"?:
        outcomes.append(.unchanged)
      case "refused"?:
        let words = outcome.string("error") ?? "refused"
        outcomes.append(
          .refused(outcome["reason"].map { ChangeRefusal(json: $0, words: words) } ?? .unknown(code: nil, words: words))
        )
      default:
        throw .unknownResult
      }
    }
    self.init(head: UInt64(head), outcomes: outcomes)
    self.numbers = numbers
  }
}
