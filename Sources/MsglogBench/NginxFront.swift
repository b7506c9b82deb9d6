import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// nginx in the foreground in front of `serve` nodes, as docs/POSTGRES.md's
/// team recipe runs it (without TLS: the figure is about the nodes): one
/// upstream of every node, keep-alive connections to them, requests spread
/// round robin. Everything it writes stays in `directory`.
final class NginxFront {
  static let path = "/usr/sbin/nginx"
  private let process = Process()
  let port: UInt16

  init(nodes: [UInt16], directory: String) throws {
    guard FileManager.default.isExecutableFile(atPath: Self.path) else {
      throw BenchError("nginx is not installed (scripts/setup --test installs it)")
    }
    try FileManager.default.createDirectory(atPath: directory + "/logs", withIntermediateDirectories: true)
    port = try freeLoopbackPort()
    let servers = nodes.map { "        server 127.0.0.1:\($0);\n" }.joined()
    let config = """
      daemon off;
      worker_processes auto;
      pid \(directory)/nginx.pid;
      error_log \(directory)/logs/error.log;
      events { worker_connections 1024; }
      http {
          access_log off;
          client_body_temp_path \(directory)/body;
          proxy_temp_path \(directory)/proxy;
          fastcgi_temp_path \(directory)/fastcgi;
          uwsgi_temp_path \(directory)/uwsgi;
          scgi_temp_path \(directory)/scgi;
          upstream msglog {
      \(servers)        keepalive 128;
          }
          server {
              listen 127.0.0.1:\(port);
              # A client's keep-alive connection lasts the run: nginx's own
              # limit (1,000 requests) closed the bench's connections once
              # the nodes passed 1,000 appends a client.
              keepalive_requests 100000000;
              location / {
                  proxy_pass http://msglog;
                  proxy_http_version 1.1;
                  proxy_set_header Connection "";
                  proxy_set_header Host $http_host;
                  proxy_buffering off;
              }
          }
      }

      """
    let file = directory + "/nginx.conf"
    try config.write(toFile: file, atomically: true, encoding: .utf8)
    process.executableURL = URL(fileURLWithPath: Self.path)
    process.arguments = ["-p", directory, "-c", file]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    // Serving once a request through it reaches a node.
    let deadline = ContinuousClock.now + .seconds(30)
    while true {
      if let connection = try? HTTPConnection(port: port), (try? connection.get("/livez")) != nil { break }
      guard process.isRunning, ContinuousClock.now < deadline else {
        stop()
        throw BenchError("nginx did not start serving on port \(port)")
      }
      usleep(20_000)
    }
  }

  func stop() {
    guard process.isRunning else { return }
    process.terminate()
    process.waitUntilExit()
  }
}

/// A TCP port on 127.0.0.1 that nobody listens on now (the kernel's choice).
func freeLoopbackPort() throws -> UInt16 {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { throw BenchError("socket: \(errno)") }
  defer { close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  address.sin_port = 0
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  let bound = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
      bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
    }
  }
  guard bound else { throw BenchError("bind: \(errno)") }
  return UInt16(bigEndian: address.sin_port)
}
