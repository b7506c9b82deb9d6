/// Takes a `Transfer-Encoding: chunked` body apart as its bytes arrive
/// (RFC 9112 §7.1), strictly and the same for both ends: a size is hex
/// digits (at most 15), every line ends in CR LF, a chunk's data is
/// followed by CR LF, and the body ends with a zero-size chunk, trailer
/// fields, and an empty line.
///
/// Chunk extensions (§7.1.1) and trailer fields have their grammar checked
/// and their meaning ignored: nothing msglog sends or asks for travels in
/// them, and a recipient "MUST ignore unrecognized chunk extensions" — but
/// a line a proxy in front could read otherwise is refused, not guessed.
/// The decoder is fed byte by byte in effect, so how the bytes were cut
/// into reads never changes what it decides.
package struct ChunkedDecoder {
  private enum State {
    /// Reading a size line (`line` so far).
    case size
    /// Inside a chunk: this many data bytes to come.
    case data(Int)
    /// After a chunk's data: its CR, then its LF.
    case dataCR, dataLF
    /// After the last chunk's line: trailer lines until an empty one, and
    /// the trailer's bytes so far.
    case trailer(bytes: Int)
    case done
  }

  private var state = State.size
  /// A size or trailer line not yet whole, its CR LF included.
  private var line: [UInt8] = []
  /// The data's bytes announced so far, held under `bodyLimit`.
  private var announced = 0
  /// The longest size line (its extensions included, not its CR LF).
  private let lineLimit: Int
  /// The longest trailer section.
  private let trailerLimit: Int
  /// The most data a body may carry (a `bodyTooLarge` fault, as soon as a
  /// size line says more).
  private let bodyLimit: Int

  package init(lineLimit: Int = 16_384, trailerLimit: Int = 16_384, bodyLimit: Int = .max) {
    self.lineLimit = lineLimit
    self.trailerLimit = trailerLimit
    self.bodyLimit = bodyLimit
  }

  /// Whether the last chunk and its trailer have been read.
  package var isDone: Bool {
    if case .done = state { return true }
    return false
  }

  /// Reads from `input`, handing each piece of chunk data to `data` (slices
  /// of `input`, which it must not keep); returns how many bytes of
  /// `input` were taken, which is all of them unless the body ended before
  /// (the rest belongs to what follows the body).
  package mutating func decode(_ input: UnsafeRawBufferPointer, data: (UnsafeRawBufferPointer) -> Void)
    throws(HTTPSyntaxError) -> Int
  {
    var index = 0
    while index < input.count {
      switch state {
      case .done:
        return index
      case .data(let remaining):
        let end = index + min(remaining, input.count - index)
        data(UnsafeRawBufferPointer(rebasing: input[index..<end]))
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
          try checkLength()
          continue
        }
        guard line.count >= 2, line[line.count - 2] == HTTPHeadParser.cr else {
          throw HTTPSyntaxError("a line of the chunked body ends with a bare LF")
        }
        try lineEnded()
      }
    }
    return index
  }

  /// A line still open is within its bound (its CR may yet come).
  private func checkLength() throws(HTTPSyntaxError) {
    switch state {
    case .size:
      if line.count > lineLimit + 1 { throw HTTPSyntaxError("a chunk's size line is over \(lineLimit) bytes") }
    case .trailer(let bytes):
      if bytes + line.count > trailerLimit + 1 { throw HTTPSyntaxError("the trailer is over \(trailerLimit) bytes") }
    default: break
    }
  }

  /// A size or trailer line is whole in `line`.
  private mutating func lineEnded() throws(HTTPSyntaxError) {
    defer { line.removeAll(keepingCapacity: true) }
    let content = line.count - 2
    if case .trailer(let bytes) = state {
      guard content > 0 else {
        state = .done
        return
      }
      guard bytes + line.count <= trailerLimit else {
        throw HTTPSyntaxError("the trailer is over \(trailerLimit) bytes")
      }
      let malformed = line.withUnsafeBytes { bytes in
        Result { () throws(HTTPSyntaxError) in
          _ = try HTTPHeadParser.field(UnsafeRawBufferPointer(rebasing: bytes[..<content]))
        }
      }
      try malformed.get()
      state = .trailer(bytes: bytes + line.count)
      return
    }
    let size = try Self.size(of: line[..<content])
    if size == 0 {
      state = .trailer(bytes: 0)
      return
    }
    guard size <= bodyLimit - announced else {
      throw HTTPSyntaxError("the body is over \(bodyLimit) bytes", fault: .bodyTooLarge)
    }
    announced += size
    state = .data(size)
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
