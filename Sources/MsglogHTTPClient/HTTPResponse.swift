/// A whole answer: its head and its body, read to the end.
public struct HTTPResponse: Sendable, Equatable {
  public var head: HTTPResponseHead
  public var body: [UInt8]

  public init(head: HTTPResponseHead, body: [UInt8]) {
    self.head = head
    self.body = body
  }

  public var status: Int { head.status }

  /// The body as UTF-8 text (invalid sequences replaced).
  public var text: String { String(decoding: body, as: UTF8.self) }
}
