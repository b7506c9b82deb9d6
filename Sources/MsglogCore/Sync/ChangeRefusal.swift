/// Why a remote refused a replica's change, as its outcome is kept for
/// good and sent (docs/SYNC.md, "A refused change"): what happened, as the
/// error the ledger refused the change with, which the rows and the wire
/// hold as a code and its data — `{"code":"item-removed","id":"…","seq":5}`
/// (`ChangeRefusal+Codes`) — and never as words, so that a program can
/// switch on it and a later msglog can word it anew. Words are made where
/// it is shown (`description`, the command line, the server, the page).
public enum ChangeRefusal: Equatable, Sendable, CustomStringConvertible {
  /// A reason this msglog knows: the error the change was refused with.
  case error(MsglogError)
  /// A reason this msglog cannot tell, in the only words it has: an
  /// outcome an older msglog kept in its words (`code` nil), or a newer
  /// msglog's code this one does not know, worded by the remote that sent it.
  case unknown(code: String?, words: String)

  /// The reason a change refused with `error` keeps; nil for an error
  /// that has no code, which refuses no change (the push fails whole
  /// instead, nothing done: only a reason with a code is kept for good).
  package init?(_ error: MsglogError) {
    guard Self.coded(error) != nil else { return nil }
    self = .error(error)
  }

  /// The reason in the library's words.
  public var description: String {
    switch self {
    case .error(let error): return error.description
    case .unknown(_, let words): return words
    }
  }

  /// The code a program switches on: `item-removed`; nil for words kept
  /// by an older msglog.
  public var code: String? {
    switch self {
    case .error(let error): return Self.coded(error)?.code
    case .unknown(let code, _): return code
    }
  }

  // MARK: - As JSON

  /// Writes the reason's code and data as one JSON object. An unknown
  /// reason has only its code, if it has one (its words are not its data).
  package func write(to json: inout JSONWriter) {
    json.object { json in
      switch self {
      case .error(let error):
        guard let (code, arguments) = Self.coded(error) else {
          preconditionFailure("a refusal without a code: \(error)")
        }
        json.member("code", code)
        for (name, argument) in arguments {
          json.key(name)
          switch argument {
          case .id(let id): json.value(id)
          case .number(let number): json.value(number)
          case .stream(let stream): json.value(stream)
          case .text(let text): json.value(text)
          case .time(let time): json.value(time)
          }
        }
      case .unknown(let code, _):
        if let code { json.member("code", code) }
      }
    }
  }

  /// The reason as JSON bytes.
  package var json: [UInt8] {
    var json = JSONWriter()
    write(to: &json)
    return json.take()
  }

  /// Reads a reason's code and data; `words` are what to show when this
  /// msglog does not know the code, or its data does not fit it.
  package init(json value: JSONValue, words: String) {
    guard case .object(let pairs) = value, case .string(let code)? = pairs.first(where: { $0.0 == "code" })?.1 else {
      self = .unknown(code: nil, words: words)
      return
    }
    var arguments = Arguments(pairs)
    if let error = try? Self.error(code: code, &arguments), arguments.allRead {
      self = .error(error)
    } else {
      self = .unknown(code: code, words: words)
    }
  }

  // MARK: - As a row keeps it

  /// The reason as an outcome's row holds it (docs/FORMAT.md,
  /// `sync-outcomes`): a known one as its JSON, an unknown one as its words.
  package var stored: [UInt8] {
    switch self {
    case .error: return json
    case .unknown(_, let words): return Array(words.utf8)
    }
  }

  /// Reads a reason as a row holds it: a JSON object with a code, or the
  /// words an older msglog kept (no error's words start with `{`).
  package init(stored text: String) {
    if text.utf8.first == UInt8(ascii: "{"), let value = try? JSONParser.parse(text) {
      self.init(json: value, words: text)
    } else {
      self = .unknown(code: nil, words: text)
    }
  }
}
