/// Takes a `Transfer-Encoding: chunked` body apart as its bytes arrive
/// (RFC 9112 §7.1), strictly: a size is hex digits (at most 15), an
/// extension is `;name` or `;name=value` (a token or a quoted string),
/// every line ends in CRLF, a chunk's data is followed by CRLF, and the
/// body ends with a zero-size chunk, trailer fields, and an empty line.
///
/// Extensions and trailers are read and dropped: nothing msglog asks for
/// comes in them.
package struct ChunkedDecoder {
  private enum State {
    /// Reading a size line (`line` so far).
    case size
    /// Inside a chunk: this many data bytes to come.
    case data(Int)
    /// After a chunk's data: its CR, then its LF.
    case dataCR, dataLF
    /// After the last chunk's line: trailer lines until an empty one.
    case trailer
    case done

    var isTrailer: Bool {
      if case .trailer = self { return true }
      return false
    }
  }

  private var state = State.size
  private var line: [UInt8] = []
  private var trailerBytes = 0
  /// The longest size line (with its extensions) and trailer section taken.
  private let lineLimit: Int

  package init(lineLimit: Int = 16_384) { self.lineLimit = lineLimit }

  /// Whether the last chunk and its trailer have been read.
  package var isDone: Bool {
    if case .done = state { return true }
    return false
  }

  /// Reads from `input`, handing each piece of chunk data to `data` (slices
  /// of `input`); returns how many bytes of `input` were taken, which is
  /// all of them unless the body ended before (the rest belongs to what
  /// follows the body).
  package mutating func decode(
    _ input: ArraySlice<UInt8>, data: (ArraySlice<UInt8>) -> Void
  ) throws(HTTPSyntaxError) -> Int {
    var index = input.startIndex
    while index < input.endIndex {
      switch state {
      case .done:
        return index - input.startIndex
      case .data(let remaining):
        let end = input.index(index, offsetBy: min(remaining, input.endIndex - index))
        data(input[index..<end])
        let left = remaining - (end - index)
        state = left == 0 ? .dataCR : .data(left)
        index = end
      case .dataCR:
        guard input[index] == HTTPHeadParser.cr else { throw HTTPSyntaxError("a chunk is longer than its size") }
        state = .dataLF
        index += 1
      case .dataLF:
        guard input[index] == HTTPHeadParser.lf else { throw HTTPSyntaxError("a chunk's data ends with a bare CR") }
        state = .size
        index += 1
      case .size, .trailer:
        let byte = input[index]
        index += 1
        line.append(byte)
        guard byte == HTTPHeadParser.lf else {
          if line.count > lineLimit {
            throw HTTPSyntaxError(
              state.isTrailer ? "the trailer is longer than \(lineLimit) bytes" : "a chunk's size line is too long")
          }
          continue
        }
        guard line.count >= 2, line[line.count - 2] == HTTPHeadParser.cr else {
          throw HTTPSyntaxError("a line of the chunked body ends with a bare LF")
        }
        let text = line[..<(line.count - 2)]
        line.removeAll(keepingCapacity: true)
        if case .trailer = state {
          if text.isEmpty {
            state = .done
          } else {
            trailerBytes += text.count + 2
            guard trailerBytes <= lineLimit else {
              throw HTTPSyntaxError("the trailer is longer than \(lineLimit) bytes")
            }
            _ = try HTTPHeadParser.fields([text])
          }
        } else {
          let size = try Self.size(of: text)
          state = size == 0 ? .trailer : .data(size)
        }
      }
    }
    if case .done = state { return index - input.startIndex }
    return input.count
  }

  /// The size in a size line, its extensions checked and dropped.
  private static func size(of line: ArraySlice<UInt8>) throws(HTTPSyntaxError) -> Int {
    var index = line.startIndex
    var size = 0
    var digits = 0
    while index < line.endIndex, let value = hexValue(line[index]) {
      digits += 1
      guard digits <= 15 else { throw HTTPSyntaxError("a chunk size has more than 15 hex digits") }
      size = size << 4 | value
      index += 1
    }
    guard digits > 0 else { throw HTTPSyntaxError("a chunk size is not a hexadecimal number") }
    try checkExtensions(line[index...])
    return size
  }

  /// `*( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )`
  private static func checkExtensions(_ text: ArraySlice<UInt8>) throws(HTTPSyntaxError) {
    var rest = text
    func skipSpace() {
      while let byte = rest.first, byte == HTTPHeadParser.space || byte == HTTPHeadParser.tab { rest.removeFirst() }
    }
    func token() -> Bool {
      let count = rest.prefix(while: HTTPHeadParser.isTokenByte).count
      rest.removeFirst(count)
      return count > 0
    }
    let malformed = HTTPSyntaxError("a chunk extension is malformed")
    while true {
      skipSpace()
      guard let byte = rest.first else { return }
      guard byte == UInt8(ascii: ";") else { throw malformed }
      rest.removeFirst()
      skipSpace()
      guard token() else { throw malformed }
      skipSpace()
      guard rest.first == UInt8(ascii: "=") else { continue }
      rest.removeFirst()
      skipSpace()
      if rest.first == UInt8(ascii: "\"") {
        rest.removeFirst()
        var closed = false
        while let byte = rest.popFirst() {
          if byte == UInt8(ascii: "\"") {
            closed = true
            break
          }
          if byte == UInt8(ascii: "\\") {
            guard let escaped = rest.popFirst(), HTTPHeadParser.isValueByte(escaped) else { throw malformed }
          } else {
            guard HTTPHeadParser.isValueByte(byte) else { throw malformed }
          }
        }
        guard closed else { throw malformed }
      } else {
        guard token() else { throw malformed }
      }
    }
  }

  private static func hexValue(_ byte: UInt8) -> Int? {
    switch byte {
    case 0x30...0x39: return Int(byte - 0x30)
    case 0x41...0x46: return Int(byte - 0x41 + 10)
    case 0x61...0x66: return Int(byte - 0x61 + 10)
    default: return nil
    }
  }
}
