/// The name of a stream: 1–200 bytes of UTF-8 without control characters.
///
/// Names are byte strings, as they are on disk: two names are the same
/// stream only when their bytes are equal. Swift's `String` compares by
/// canonical equivalence (`"é"` precomposed equals `"e"` + U+0301), so a
/// `String` key would merge two streams that the store keeps apart; this
/// type compares, hashes and sorts by the UTF-8 bytes instead.
public struct StreamName: Hashable, Comparable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
  /// The name as text, its bytes exactly as given.
  public let text: String

  /// A name known to be valid (read back from the store, or a literal).
  package init(_ text: String) { self.text = text }

  public init(stringLiteral value: String) { self.text = value }

  /// Checks the rules of docs/REFERENCE.md: 1–200 bytes, no control characters.
  public init(validating text: String) throws(MsglogError) {
    try Limits.checkStreamName(text)
    self.text = text
  }

  /// `main`, the stream used when none is named.
  public static let main: StreamName = "main"

  /// The UTF-8 bytes of the name.
  public var bytes: [UInt8] { Array(text.utf8) }

  public var description: String { text }

  public static func == (a: StreamName, b: StreamName) -> Bool {
    // Where both are native strings, their bytes as they lie: walking
    // both views cost 300 instructions a comparison (one for each event
    // an import reads).
    let same = a.text.utf8.withContiguousStorageIfAvailable { x in
      b.text.utf8.withContiguousStorageIfAvailable { y in x.count == y.count && x.elementsEqual(y) }
    }
    if let same = same ?? nil { return same }
    return a.text.utf8.count == b.text.utf8.count && a.text.utf8.elementsEqual(b.text.utf8)
  }

  public func hash(into hasher: inout Hasher) {
    var text = self.text
    text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
  }

  /// Bytewise order, the order of LMDB's keys.
  public static func < (a: StreamName, b: StreamName) -> Bool {
    a.text.utf8.lexicographicallyPrecedes(b.text.utf8)
  }

  /// Calls `body` with the name's bytes, without copying them when the
  /// string is stored contiguously (as every string msglog makes is).
  package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    if let result = try text.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
      return result
    }
    return try Array(text.utf8).withUnsafeBytes(body)
  }
}
