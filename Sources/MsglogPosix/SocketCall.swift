#if canImport(Glibc)
  import Glibc
#endif

/// What one call on a non-blocking socket came to.
package enum SocketResult: Equatable, Sendable {
  case bytes(Int)
  /// Nothing could move now: wait for readiness (`poll`, epoll).
  case wouldBlock
  /// The peer ended its side (a read of 0).
  case ended
  case failed(Int32)
}

/// The calls on a connected non-blocking socket that both ends make the
/// same way: a signal's interruption is retried, and a send to a peer that
/// went away is an `EPIPE`, never a SIGPIPE that kills the process. The
/// server's event loop and the client's waits with deadlines decide what
/// to do with `.wouldBlock`.
package enum SocketCall {
  /// One recv(2) into `buffer`.
  package static func receive(_ descriptor: Int32, into buffer: UnsafeMutableRawBufferPointer) -> SocketResult {
    while true {
      let n = recv(descriptor, buffer.baseAddress, buffer.count, 0)
      if n > 0 { return .bytes(n) }
      if n == 0 { return .ended }
      if errno == EINTR { continue }
      return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed(errno)
    }
  }

  /// One send(2) of `bytes` (MSG_NOSIGNAL).
  package static func send(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> SocketResult {
    while true {
      let n = Glibc.send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
      if n >= 0 { return .bytes(n) }
      if errno == EINTR { continue }
      return errno == EAGAIN || errno == EWOULDBLOCK ? .wouldBlock : .failed(errno)
    }
  }
}
