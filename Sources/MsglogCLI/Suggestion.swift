/// "Did you mean …?" for a mistyped command or option, from the names the
/// declaration table knows (as git and cargo do).
///
/// Names are compared by Damerau–Levenshtein distance (its optimal string
/// alignment form: insertions, deletions, substitutions and swaps of two
/// neighbours each cost one), ignoring case, and offered only when close:
/// at most one edit per three characters typed (at least one), so `lsit`
/// finds `list` while `frobnicate` finds nothing.
enum Suggestion {
  /// The hint for `typed`: the closest of `names` (all of those equally
  /// close), or nil when none is close enough.
  static func hint(for typed: String, among names: [String], prefix: String = "") -> String? {
    let closest = closest(to: typed, among: names)
    guard !closest.isEmpty else { return nil }
    return "did you mean " + closest.map { "'\(prefix)\($0)'" }.joined(separator: " or ") + "?"
  }

  static func closest(to typed: String, among names: [String]) -> [String] {
    let word = Array(typed.lowercased().unicodeScalars)
    let limit = max(1, word.count / 3)
    var best = limit + 1
    var found: [String] = []
    for name in names where name != typed {
      let d = distance(word, Array(name.lowercased().unicodeScalars))
      if d < best {
        best = d
        found = [name]
      } else if d == best {
        found.append(name)
      }
    }
    return found
  }

  /// The optimal string alignment distance between `a` and `b`.
  static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    // Three rows of the matrix: two back (for a swap), one back, this one.
    var before = [Int](repeating: 0, count: b.count + 1)
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
      current[0] = i
      for j in 1...b.count {
        let cost = a[i - 1] == b[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
          current[j] = min(current[j], before[j - 2] + 1)
        }
      }
      (before, previous, current) = (previous, current, before)
    }
    return previous[b.count]
  }
}

extension CommandName {
  /// The hint for an unknown command: the command meant, else where the list is.
  static func suggestion(for typed: String) -> String {
    Suggestion.hint(for: typed, among: allCases.map(\.rawValue)) ?? "see 'msglog --help'"
  }
}
