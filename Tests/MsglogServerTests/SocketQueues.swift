import Foundation

/// What the kernel holds on the TCP connections to a port (`/proc/net/tcp`
/// and `tcp6`): the signal that a server has read all its clients sent.
enum SocketQueues {
  /// Bytes sent toward the server on `port` that it has not read yet: the
  /// clients' send queues (written, not yet taken by the server's side)
  /// and the server's receive queues (taken by its kernel, not read by it).
  /// Answers waiting for the clients are not counted.
  static func unreadByServer(port: UInt16) -> Int {
    var total = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
      guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 4, fields[3] != "0A" else { continue }  // not a listening socket
        let queues = fields[4].split(separator: ":").map { Int($0, radix: 16) ?? 0 }
        guard queues.count == 2 else { continue }
        if Self.port(fields[1]) == port { total += queues[1] }  // the server's side: what it has not read
        if Self.port(fields[2]) == port { total += queues[0] }  // a client's side: what it has not sent
      }
    }
    return total
  }

  /// Waits until the server on `port` has read everything sent to it;
  /// false if it has not within `seconds`.
  static func waitUntilServerReadAll(port: UInt16, seconds: Double = 60) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while unreadByServer(port: port) > 0 {
      guard Date() < deadline else { return false }
      usleep(10_000)  // how often to look again, not a wait for something to happen
    }
    return true
  }

  /// The port of an address as the tables write it (`0100007F:1F90`).
  private static func port(_ address: Substring) -> UInt16? {
    address.split(separator: ":").last.flatMap { UInt16($0, radix: 16) }
  }
}
