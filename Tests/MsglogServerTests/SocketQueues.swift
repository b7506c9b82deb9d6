import Foundation

/// What the kernel holds on the TCP connections to a port (`/proc/net/tcp`
/// and `tcp6`): the signal that a server has read all its clients sent.
enum SocketQueues {
  /// Bytes sent toward the server on `port` that it has not read yet: the
  /// clients' send queues (written, not yet taken by the server's side)
  /// and the server's receive queues (taken by its kernel, not read by it).
  /// Answers waiting for the clients are not counted.
  ///
  /// Read through a pointer: in the whole suite the tables hold thousands
  /// of connections, and splitting them as strings in a debug build kept a
  /// core busy while the server it waited for needed it.
  static func unreadByServer(port: UInt16) -> Int {
    var total = 0
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
      guard let text = try? String(contentsOfFile: table, encoding: .utf8) else { continue }
      Array(text.utf8).withUnsafeBufferPointer { bytes in
        var lineStart = 0
        while lineStart < bytes.count {
          var lineEnd = lineStart
          while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
          if lineStart > 0 {  // not the header
            total += unread(inLine: UnsafeBufferPointer(rebasing: bytes[lineStart..<lineEnd]), port: port)
          }
          lineStart = lineEnd + 1
        }
      }
    }
    return total
  }

  /// One connection's line (`sl local remote st tx:rx …`): what it holds
  /// toward the server on `port`.
  private static func unread(inLine line: UnsafeBufferPointer<UInt8>, port: UInt16) -> Int {
    // The first five fields, separated by runs of spaces.
    var fields: [Range<Int>] = []
    var i = 0
    while fields.count < 5, i < line.count {
      while i < line.count, line[i] == 0x20 { i += 1 }
      let start = i
      while i < line.count, line[i] != 0x20 { i += 1 }
      if i > start { fields.append(start..<i) }
    }
    guard fields.count == 5, !line[fields[3]].elementsEqual("0A".utf8) else { return 0 }  // not a listening socket
    let queues = Self.hexPair(line, fields[4])
    guard let queues else { return 0 }
    var total = 0
    if Self.port(line, fields[1]) == port { total += queues.rx }  // the server's side: what it has not read
    if Self.port(line, fields[2]) == port { total += queues.tx }  // a client's side: what it has not sent
    return total
  }

  /// `tx:rx` in hexadecimal.
  private static func hexPair(_ line: UnsafeBufferPointer<UInt8>, _ field: Range<Int>) -> (tx: Int, rx: Int)? {
    guard let colon = line[field].firstIndex(of: UInt8(ascii: ":")),
      let tx = hex(line, field.lowerBound..<colon), let rx = hex(line, (colon + 1)..<field.upperBound)
    else { return nil }
    return (tx, rx)
  }

  /// The port of an address as the tables write it (`0100007F:1F90`).
  private static func port(_ line: UnsafeBufferPointer<UInt8>, _ field: Range<Int>) -> UInt16? {
    guard let colon = line[field].lastIndex(of: UInt8(ascii: ":")), let port = hex(line, (colon + 1)..<field.upperBound)
    else { return nil }
    return UInt16(exactly: port)
  }

  private static func hex(_ line: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int? {
    guard !range.isEmpty else { return nil }
    var value = 0
    for i in range {
      let c = line[i]
      let digit: Int
      switch c {
      case 0x30...0x39: digit = Int(c - 0x30)
      case 0x41...0x46: digit = Int(c - 0x41 + 10)
      case 0x61...0x66: digit = Int(c - 0x61 + 10)
      default: return nil
      }
      value = value * 16 + digit
    }
    return value
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
}
