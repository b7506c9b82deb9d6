/// What a named token may do: the streams it may read, write and erase,
/// each a list of patterns. Writing includes reading the same streams,
/// erasing includes writing them; a token with no pattern may do nothing.
public struct TokenScopes: Hashable, Sendable {
  public var read: [StreamPattern]
  public var write: [StreamPattern]
  public var erase: [StreamPattern]

  public init(read: [StreamPattern] = [], write: [StreamPattern] = [], erase: [StreamPattern] = []) {
    self.read = read
    self.write = write
    self.erase = erase
  }

  /// What may be done to a stream, each right including those before it.
  public enum Right: String, Sendable, Comparable, CaseIterable {
    case read, write, erase

    public static func < (a: Right, b: Right) -> Bool {
      allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
  }

  /// The patterns that give `right` (those of a greater right too).
  public func patterns(giving right: Right) -> [StreamPattern] {
    switch right {
    case .read: return read + write + erase
    case .write: return write + erase
    case .erase: return erase
    }
  }

  /// Whether the token may do `right` to `stream`.
  public func allows(_ right: Right, on stream: StreamName) -> Bool {
    patterns(giving: right).contains { $0.matches(stream) }
  }

  /// Whether the token may do `right` to every stream (`*`): what reading
  /// the whole log (a sync's pull, a clone) needs.
  public func allowsEveryStream(_ right: Right) -> Bool {
    patterns(giving: right).contains(.every)
  }

  /// Whether the token may do nothing at all.
  public var isEmpty: Bool { read.isEmpty && write.isEmpty && erase.isEmpty }
}
