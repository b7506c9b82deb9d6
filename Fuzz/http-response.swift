import MsglogHTTPWire

/// Any bytes as what a server answers on one connection: the answer's head
/// (`HTTPHeadParser.response`), then a chunked body (`ChunkedDecoder`).
/// Neither crashes nor takes more than it was given, and both decide the
/// same — the head, the body's bytes, where the body ends, or the same
/// refusal — whether the bytes come at once or cut into reads of any size.
/// (The requests' side of the same parser: the `http-request` target.)
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPResponse(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard size > 0 else { return 0 }
  let step = Int(data[0]) + 1
  let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
  let whole = decodeAll(bytes, step: bytes.count + 1)
  let pieces = decodeAll(bytes, step: step)
  precondition(whole == pieces, "the answer depends on how the bytes were cut: \(whole) vs \(pieces)")
  return 0
}

/// What the head parser and the chunked decoder make of `bytes`, fed `step`
/// bytes at a time.
private func decodeAll(_ bytes: [UInt8], step: Int) -> [String] {
  var events: [String] = []
  var buffer: [UInt8] = []
  var offset = 0
  var decoder: ChunkedDecoder? = nil
  var body: [UInt8] = []
  while offset < bytes.count {
    let more = bytes[offset..<min(bytes.count, offset + step)]
    offset += more.count
    buffer += more
    do {
      if decoder == nil {
        let available = buffer.count
        let parsed = try buffer.withUnsafeBytes { buffer in
          try HTTPHeadParser.response(buffer, limits: .head(1024))
        }
        guard let parsed else { continue }
        precondition(parsed.length <= available, "took \(parsed.length) of \(available) bytes")
        precondition((100...599).contains(parsed.start.status))
        events.append("head \(parsed.start.status) \(parsed.fields.count)")
        buffer.removeFirst(parsed.length)
        decoder = ChunkedDecoder(lineLimit: 64, trailerLimit: 256, bodyLimit: 2048)
      }
      let available = buffer.count
      let taken = try buffer.withUnsafeBytes { buffer in
        try decoder!.decode(buffer) { body.append(contentsOf: $0) }
      }
      precondition(taken <= available, "took \(taken) of \(available) bytes")
      precondition(body.count <= 2048, "a body of \(body.count) over its bound")
      buffer.removeFirst(taken)
      if decoder!.isDone {
        events.append(
          "body \(body.count) \(body.reduce(0) { $0 &* 31 &+ Int($1) }) rest \(buffer.count + bytes.count - offset)")
        return events
      }
    } catch let error as HTTPSyntaxError {
      events.append("refused \(error.fault)")
      return events
    } catch {
      preconditionFailure("\(error)")
    }
  }
  return events
}
