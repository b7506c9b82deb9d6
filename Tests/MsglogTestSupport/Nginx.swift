import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// nginx run in the foreground, unprivileged, with a document's block as
/// its `http` configuration, everything else (pid, logs, temporary files)
/// in the test's directory; stopped by the test (SIGTERM).
public final class Nginx {
  public let child: Sandbox.Child
  public let dir: String
  public static let binary = "/usr/sbin/nginx"

  public static var isInstalled: Bool { FileManager.default.isExecutableFile(atPath: binary) }

  public init(config: String, in s: Sandbox) throws {
    dir = s.dir + "/nginx"
    try FileManager.default.createDirectory(atPath: dir + "/logs", withIntermediateDirectories: true)
    let whole = """
      daemon off;
      pid \(dir)/nginx.pid;
      error_log \(dir)/logs/error.log;
      events {}
      http {
          access_log \(dir)/logs/access.log;
          client_body_temp_path \(dir)/body;
          proxy_temp_path \(dir)/proxy;
          fastcgi_temp_path \(dir)/fastcgi;
          uwsgi_temp_path \(dir)/uwsgi;
          scgi_temp_path \(dir)/scgi;
      \(config)
      }

      """
    _ = FileManager.default.createFile(atPath: dir + "/nginx.conf", contents: Data(whole.utf8))
    child = s.start(["-p", dir, "-c", dir + "/nginx.conf"], useDefaultDB: false, runner: Self.binary)
  }

  /// Until nginx answers `url` with 200 through to a `serve` (curl with
  /// `curl`'s options; a watchdog bounds the wait: nginx says nothing when
  /// it is ready).
  public func waitUntilServing(_ url: String, curl: [String]) throws {
    for _ in 0..<400 where child.process.isRunning {
      let r = runProgram("/usr/bin/curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}"] + curl + [url])
      if r.stdout == "200" { return }
      usleep(25_000)
    }
    throw NginxError(said: (try? String(contentsOfFile: dir + "/logs/error.log", encoding: .utf8)) ?? "")
  }

  public func stop() {
    if child.process.isRunning { kill(child.process.processIdentifier, SIGTERM) }
    _ = child.finish()
  }

  /// A self-signed certificate for `host`, made with openssl into `dir`:
  /// the certificate's and the key's paths.
  public static func certificate(for host: String, in dir: String) throws -> (certificate: String, key: String) {
    let (certificate, key) = (dir + "/\(host).pem", dir + "/\(host).key")
    let made = runProgram(
      "/usr/bin/openssl",
      [
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "1",
        "-subj", "/CN=\(host)", "-addext", "subjectAltName=DNS:\(host)",
      ])
    guard made.code == 0 else { throw NginxError(said: "openssl: \(made)") }
    return (certificate, key)
  }
}

public struct NginxError: Error, CustomStringConvertible {
  public var said: String
  public var description: String { "nginx did not serve: \(said)" }
}
