import Foundation
import MsglogTestSupport
import Testing

/// Throwaway certificates, made with `openssl` in a test's directory: an
/// authority, and servers' certificates it signed.
struct TestCertificates {
  let dir: String
  /// The authority's certificate: the CA file a client is given.
  var authority: String { dir + "/ca.pem" }

  init(in dir: String) throws {
    self.dir = dir
    let made = shell(
      "cd '\(dir)' && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key"
        + " -out ca.pem -days 2 -subj '/CN=msglog test CA' -addext basicConstraints=critical,CA:TRUE"
        + " -addext keyUsage=critical,keyCertSign,cRLSign > openssl.log 2>&1")
    try #require(made == 0, "openssl req failed: \(log)")
  }

  private var log: String { (try? String(contentsOfFile: dir + "/openssl.log", encoding: .utf8)) ?? "" }

  /// A server's certificate and key, signed by the authority, for the
  /// names (`DNS:localhost`, `IP:127.0.0.1`), valid for `days` (negative:
  /// expired since it was made).
  func server(_ name: String, for names: [String], days: Int = 1) throws -> (certificate: String, key: String) {
    let extensions =
      "subjectAltName=\(names.joined(separator: ","))\nbasicConstraints=CA:FALSE\n"
      + "extendedKeyUsage=serverAuth\n"
    try extensions.write(toFile: dir + "/\(name).ext", atomically: true, encoding: .utf8)
    let made = shell(
      "cd '\(dir)' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout \(name).key"
        + " -out \(name).csr -subj '/CN=\(name)' >> openssl.log 2>&1"
        + " && openssl x509 -req -in \(name).csr -CA ca.pem -CAkey ca.key -CAcreateserial -out \(name).pem"
        + " -days \(days) -extfile \(name).ext >> openssl.log 2>&1")
    try #require(made == 0, "openssl x509 failed: \(log)")
    return (dir + "/\(name).pem", dir + "/\(name).key")
  }
}
