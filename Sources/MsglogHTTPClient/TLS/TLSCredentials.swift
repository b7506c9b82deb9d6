import MsglogTLS

#if canImport(Glibc)
  import Glibc
#endif

/// The certificates a client trusts: the system's roots, or the CA file
/// the caller names instead (a team's own authority, a self-signed server).
/// Loaded once per client, at its first https:// connection, and shared
/// by its sessions.
final class TLSCredentials: @unchecked Sendable {
  let certificates: TLSCertificates

  init(caFile: String?, origin: String) throws {
    do throws(TLSFailure) {
      certificates = try Self.trusting(caFile)
    } catch {
      throw HTTPClientError.tls(origin: origin, error)
    }
  }

  private static func trusting(_ caFile: String?) throws(TLSFailure) -> TLSCertificates {
    let certificates: TLSCertificates
    do throws(TLSCode) {
      certificates = try TLSCertificates()
    } catch {
      throw .failed(error.message)
    }
    if let caFile {
      let count: Int
      do throws(TLSCode) {
        count = try certificates.trust(file: caFile)
      } catch {
        let readable = access(caFile, R_OK) == 0
        throw .caFile(path: caFile, reason: readable ? error.message : systemMessage(errno))
      }
      if count == 0 { throw .caFile(path: caFile, reason: "it holds no PEM certificate") }
    } else {
      let count: Int
      do throws(TLSCode) {
        count = try certificates.trustSystemRoots()
      } catch {
        throw .failed("cannot load the system's trusted certificates: " + error.message)
      }
      if count == 0 { throw .failed("the system has no trusted certificates (Debian: ca-certificates)") }
    }
    return certificates
  }
}
