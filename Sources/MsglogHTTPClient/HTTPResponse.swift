/// A whole answer: its head and its body, read to the end.
package struct HTTPResponse: Sendable, Equatable {
  package var head: HTTPResponseHead
  package var body: [UInt8]

  package init(head: HTTPResponseHead, body: [UInt8]) {
    self.head = head
    self.body = body
  }

  package var status: Int { head.status }

  /// The body as UTF-8 text (invalid sequences replaced).
  package var text: String { String(decoding: body, as: UTF8.self) }
}
