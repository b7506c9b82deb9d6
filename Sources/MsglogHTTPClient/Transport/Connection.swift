/// One connection to a server, plain or TLS, and the bytes it has read
/// that no one has taken yet (the rest of an answer's head, the start of
/// its body).
final class Connection {
  /// How the bytes travel.
  private enum Channel {
    case plain(Socket)
    case tls(TLSClientSession, Socket)
    case relayed(RelayedTLS)
  }

  let origin: String
  private let channel: Channel
  private var inbox: [UInt8] = []
  private var taken = 0
  /// The room a read is given at the inbox's end, copied from this block:
  /// `repeatElement(0, count:)` is stepped a byte at a time by a debug
  /// build, 11 ms a read.
  private static let readRoom = [UInt8](repeating: 0, count: 65_536)
  /// Whether any byte has arrived since the last request went out: a kept
  /// connection that fails before that was closed by the server while idle.
  private(set) var heardSinceRequest = false

  /// Connects (and, for https://, completes the TLS handshake: in this
  /// process when it can run GnuTLS, else, or when `relaying`, through
  /// the `tlsHelper` program).
  init(
    to url: HTTPURL, connectTimeout: Double, cancellation: Cancellation, relaying: Bool,
    tlsHelper: () throws -> String, caFile: String?, credentials: () throws -> TLSCredentials
  ) throws {
    origin = url.origin
    guard url.scheme == .https else {
      channel = .plain(try Dialer.connect(to: url, timeout: connectTimeout, cancellation: cancellation))
      return
    }
    guard TLSLibrary.canRunInProcess, !relaying else {
      channel = .relayed(
        try RelayedTLS(
          program: try tlsHelper(), url: url, caFile: caFile, connectTimeout: connectTimeout,
          cancellation: cancellation))
      return
    }
    // A CA file that cannot be used fails before any connection is made.
    let trusted = try credentials()
    let socket = try Dialer.connect(to: url, timeout: connectTimeout, cancellation: cancellation)
    let session = try TLSClientSession(socket: socket, credentials: trusted, host: url.host)
    try session.handshake(timeout: connectTimeout)
    channel = .tls(session, socket)
  }

  /// Sends `bytes`, waiting at most `idle` seconds each time the server
  /// takes none, and ending by `exchange` when there is one.
  func send(_ bytes: [UInt8], idle: Double, by exchange: ExchangeDeadline? = nil) throws {
    heardSinceRequest = false
    guard let exchange else { return try send(bytes, idle: idle) }
    try exchange.bounding(origin) { try send(bytes, idle: exchange.shorten(idle)) }
  }

  private func send(_ bytes: [UInt8], idle: Double) throws {
    switch channel {
    case .plain(let socket): try socket.send(bytes[...], idle: idle)
    case .tls(let session, _): try session.send(bytes[...], idle: idle)
    case .relayed(let relay): try relay.send(bytes[...], idle: idle)
    }
  }

  /// What has been read and not taken.
  var buffered: ArraySlice<UInt8> { inbox[taken...] }

  /// Marks the first `count` buffered bytes as taken.
  func take(_ count: Int) {
    taken += count
    if taken == inbox.count {
      inbox.removeAll(keepingCapacity: true)
      taken = 0
    }
  }

  enum Fill {
    case more
    /// The server ended the connection (TLS: with close_notify).
    case closed
    /// A TLS connection ended without close_notify: whatever was being
    /// read to the end of the connection may have been cut.
    case closedWithoutTLSEnd
  }

  /// Reads what arrives next onto the buffered bytes, waiting at most
  /// `idle` seconds for it, and no later than `exchange` when there is one.
  func fill(idle: Double, by exchange: ExchangeDeadline?) throws -> Fill {
    guard let exchange else { return try fill(idle: idle) }
    return try exchange.bounding(origin) { try fill(idle: exchange.shorten(idle)) }
  }

  private func fill(idle: Double) throws -> Fill {
    if taken > 0 {
      inbox.removeFirst(taken)
      taken = 0
    }
    let start = inbox.count
    let room = Self.readRoom.count
    inbox.append(contentsOf: Self.readRoom)
    var count: Int? = 0
    do {
      count = try inbox.withUnsafeMutableBytes { buffer in
        let free = UnsafeMutableRawBufferPointer(rebasing: buffer[start...])
        switch channel {
        case .plain(let socket): return try socket.receive(into: free, idle: idle)
        case .tls(let session, _): return try session.receive(into: free, idle: idle)
        case .relayed(let relay): return try relay.receive(into: free, idle: idle)
        }
      }
    } catch {
      inbox.removeLast(room)
      throw error
    }
    inbox.removeLast(room - (count ?? 0))
    guard let count else { return .closedWithoutTLSEnd }
    if count == 0 { return .closed }
    heardSinceRequest = true
    return .more
  }

  /// Whether it can carry another request: nothing left unread, and
  /// nothing arrived while it sat idle (the server closing it, most often).
  var isIdleAndOpen: Bool {
    guard buffered.isEmpty else { return false }
    switch channel {
    case .plain(let socket): return !socket.hasInput
    case .tls(let session, let socket): return !session.hasPendingInput && !socket.hasInput
    case .relayed(let relay): return !relay.hasInput
    }
  }
}
