import Msglog

#if canImport(Glibc)
  import Glibc
#endif

/// What a request must show to be served, beyond its route: the token,
/// when one is set — `Authorization: Bearer TOKEN`, compared in constant time.
package struct RequestPolicy: Sendable {
  package var token: [UInt8]?

  package init(token: String? = nil) {
    self.token = token.map { Array($0.utf8) }
  }

  // MARK: - Token

  /// 401 unless the request carries the token, when one is set.
  package func checkToken(_ request: Request) throws(HTTPError) {
    guard let token else { return }
    let refusal = HTTPError(
      status: 401, message: "a bearer token is needed: send 'Authorization: Bearer TOKEN'",
      headers: [("WWW-Authenticate", "Bearer")])
    guard let header = request.header("authorization") else { throw refusal }
    let given = Array(header.utf8)
    let expected = Array("Bearer ".utf8) + token
    // Constant time: every byte is compared, whatever the first difference.
    var difference = UInt8(given.count == expected.count ? 0 : 1)
    for i in 0..<expected.count { difference |= expected[i] ^ (i < given.count ? given[i] : 0) }
    guard difference == 0 else { throw refusal }
  }
}
