/// A chunked body (RFC 9112 7.1), decoded as its bytes arrive: each chunk's
/// size line (with any extensions, ignored) at most `lineLimit` bytes, the
/// trailer at most `trailerLimit`, the whole body at most the body limit.
/// Anything malformed is a 400 that closes the connection (where the next
/// request would begin is unknown); too big a body a 413.
package struct ChunkedDecoder {
  package static let lineLimit = 4096
  package static let trailerLimit = 8192

  private enum State {
    case size
    case data(remaining: Int)
    case dataEnd
    case trailer(bytes: Int)
    case done
  }

  private var state = State.size
  /// A line not yet whole (a size line or a trailer line).
  private var line: [UInt8] = []
  let bodyLimit: Int

  package init(bodyLimit: Int) { self.bodyLimit = bodyLimit }

  package var isDone: Bool {
    if case .done = state { return true }
    return false
  }

  /// Decodes what it can of `input` into `body`; returns how many bytes it
  /// took (all of them, unless the body ended before: the rest is the next
  /// request's).
  package mutating func decode(_ input: UnsafeRawBufferPointer, into body: inout [UInt8]) throws(HTTPError) -> Int {
    var i = 0
    while i < input.count {
      switch state {
      case .done:
        return i
      case .size:
        guard let (taken, whole) = try takeLine(input, from: i, limit: Self.lineLimit, what: "a chunk's size line")
        else { return input.count }
        i += taken
        guard whole else { continue }
        let size = try Self.chunkSize(line)
        line.removeAll(keepingCapacity: true)
        if size == 0 {
          state = .trailer(bytes: 0)
        } else {
          guard body.count + size <= bodyLimit else {
            throw HTTPError(
              status: 413, message: "the request body is over \(bodyLimit) bytes", headers: [("Connection", "close")])
          }
          state = .data(remaining: size)
        }
      case .data(let remaining):
        let count = min(remaining, input.count - i)
        body.append(contentsOf: UnsafeRawBufferPointer(rebasing: input[i..<(i + count)]))
        i += count
        state = remaining == count ? .dataEnd : .data(remaining: remaining - count)
      case .dataEnd:
        guard let (taken, whole) = try takeLine(input, from: i, limit: 2, what: "a chunk's end") else {
          return input.count
        }
        i += taken
        guard whole else { continue }
        guard line.isEmpty else { throw .badFraming("a chunk is longer than its size says") }
        state = .size
      case .trailer(let bytes):
        guard let (taken, whole) = try takeLine(input, from: i, limit: Self.trailerLimit - bytes, what: "the trailer")
        else { return input.count }
        i += taken
        guard whole else { continue }
        if line.isEmpty {
          state = .done
        } else {
          if line[0] == 0x20 || line[0] == 0x09 { throw .badFraming("a trailer line is folded (obs-fold)") }
          state = .trailer(bytes: bytes + line.count + 2)
          line.removeAll(keepingCapacity: true)
        }
      }
    }
    return i
  }

  /// Takes bytes of the current line from `input`: how many, and whether
  /// the line is now whole (its CR LF taken, not kept); nil when all of
  /// `input` went into a line still open.
  private mutating func takeLine(_ input: UnsafeRawBufferPointer, from: Int, limit: Int, what: String)
    throws(HTTPError) -> (Int, Bool)?
  {
    var i = from
    while i < input.count {
      let byte = input[i]
      i += 1
      if byte == UInt8(ascii: "\n") {
        guard line.last == UInt8(ascii: "\r") else { throw .badFraming("\(what) does not end with CR LF") }
        line.removeLast()
        return (i - from, true)
      }
      if line.last == UInt8(ascii: "\r") { throw .badFraming("\(what) has a CR that does not end it") }
      line.append(byte)
      if line.count > limit + 1 { throw .badFraming("\(what) is over \(max(limit, 0)) bytes") }
    }
    return nil
  }

  /// `1*HEXDIG [ BWS ";" extensions ]`.
  private static func chunkSize(_ line: [UInt8]) throws(HTTPError) -> Int {
    var size = 0
    var digits = 0
    var i = 0
    while i < line.count, let digit = hexValue(line[i]) {
      size = size << 4 | digit
      digits += 1
      i += 1
      if digits > 15 { throw .badFraming("a chunk size is too large") }
    }
    guard digits > 0 else { throw .badFraming("a chunk has no size") }
    while i < line.count, line[i] == 0x20 || line[i] == 0x09 { i += 1 }
    guard i == line.count || line[i] == UInt8(ascii: ";") else { throw .badFraming("a chunk size is not hexadecimal") }
    guard line[i...].allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
      throw .badFraming("a chunk extension has a control character")
    }
    return size
  }

  private static func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a")) + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A")) + 10
    default: return nil
    }
  }
}
