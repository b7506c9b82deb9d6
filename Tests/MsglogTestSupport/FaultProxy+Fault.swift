/// The failures a `FaultProxy` makes, one per request.
extension FaultProxy {
  public enum Fault: String, CaseIterable, Sendable, Hashable, CustomStringConvertible {
    /// Forward the request and the answer.
    case pass
    /// Close the client's connection once the request's head has arrived,
    /// before forwarding anything: the server never sees the request.
    case dropRequest
    /// Forward the request whole and read the server's answer (its head and
    /// body; an event stream's head only), then close the client's
    /// connection without sending a byte of it: the server has done the
    /// request, the client does not know.
    case dropAnswer
    /// Forward the request, read the answer, send its head and half of its
    /// body (half of the head when it has no body), then close.
    case cutAnswer
    /// Wait `delay` seconds before forwarding the request, then pass.
    case delay

    public var description: String { rawValue }
  }
}
