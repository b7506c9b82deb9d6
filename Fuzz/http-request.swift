import MsglogCore

/// Any bytes as what a client sends on one connection: the request decoder
/// never crashes, never takes more than it was given, and makes the same
/// requests (and the same refusal) whether the bytes come at once or cut
/// into reads of any size — where a request ends never depends on how its
/// bytes arrived. An accepted request's body is exactly as long as its
/// framing says, and nothing is decoded after a refusal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPRequest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard size > 0 else { return 0 }
  let step = Int(data[0]) + 1
  let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
  let whole = decodeAll(bytes, step: bytes.count + 1)
  let pieces = decodeAll(bytes, step: step)
  precondition(whole == pieces, "the requests depend on how the bytes were cut: \(whole) vs \(pieces)")
  return 0
}

/// The decoder's events for `bytes`, fed `step` bytes at a time, each body read.
private func decodeAll(_ bytes: [UInt8], step: Int) -> [String] {
  var decoder = RequestDecoder(bodyLimit: 4096)
  var buffer: [UInt8] = []
  var events: [String] = []
  var offset = 0
  while offset < bytes.count {
    let more = bytes[offset..<min(bytes.count, offset + step)]
    offset += more.count
    buffer += more
    while true {
      let available = buffer.count
      let (taken, event) = buffer.withUnsafeBytes { decoder.decode($0) }
      precondition(taken <= available, "took \(taken) of \(available) bytes")
      buffer.removeFirst(taken)
      guard let event else {
        if taken == 0 { break }
        continue
      }
      switch event {
      case .head(let head):
        precondition(!head.method.isEmpty && (head.target.hasPrefix("/") || !head.target.contains("://")))
        events.append("head \(head.method) \(head.target) \(head.framing) \(head.keepAlive)")
        if case .request(let head, let body)? = decoder.readBody(of: head) { events.append(request(head, body)) }
      case .request(let head, let body):
        events.append(request(head, body))
      case .refused(let error):
        precondition(error.status >= 400 && error.headers.contains { $0 == ("Connection", "close") })
        events.append("refused \(error.status)")
        return events
      }
    }
  }
  return events
}

private func request(_ head: RequestHead, _ body: [UInt8]) -> String {
  if case .length(let count) = head.framing { precondition(body.count == count, "a body of \(body.count) for \(count)") }
  if head.framing == .none { precondition(body.isEmpty) }
  return "request \(body.count) \(body.reduce(0) { $0 &* 31 &+ Int($1) })"
}
