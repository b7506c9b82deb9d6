/// One request, relative to the client's URL.
package struct HTTPRequest: Sendable {
  package var method: String
  /// The path from `/` with its query (`/api/sync?protocol=1`), appended
  /// to the client's URL path; sent as is (encode it yourself).
  package var target: String
  /// Beyond those the client sets itself (`Host`, `User-Agent`,
  /// `Authorization` from the token, `Content-Length`).
  package var headers: [HTTPHeader]
  package var body: [UInt8]?
  /// The longest wait for the answer's next byte, for this request (a
  /// follow waits longer than a page); nil: the client's.
  package var idleTimeout: Double?
  /// The longest the whole exchange may take — connecting, sending, the
  /// answer's head (however many interim answers come first) and its body
  /// — however steadily the server trickles bytes; nil: no bound but the
  /// idle one. An answer read as a stream is bounded too, until its end.
  package var exchangeTimeout: Double?
  /// Whether the request may be sent again, once, when a kept connection
  /// turns out to have been closed by the server before any of the answer
  /// arrived (the ordinary race of keep-alive). True for `GET`; for a
  /// `POST` only when sending it twice does no harm (the sync's push: a
  /// change done twice is answered, not done again).
  package var retriesOnStaleConnection: Bool

  package init(
    method: String, target: String, headers: [HTTPHeader] = [], body: [UInt8]? = nil, idleTimeout: Double? = nil,
    exchangeTimeout: Double? = nil, retriesOnStaleConnection: Bool? = nil
  ) {
    self.exchangeTimeout = exchangeTimeout
    self.method = method
    self.target = target
    self.headers = headers
    self.body = body
    self.idleTimeout = idleTimeout
    self.retriesOnStaleConnection = retriesOnStaleConnection ?? (method == "GET" || method == "HEAD")
  }

  /// A `GET`, with `Accept` when given.
  package static func get(
    _ target: String, accept: String? = nil, idleTimeout: Double? = nil, exchangeTimeout: Double? = nil
  ) -> HTTPRequest {
    HTTPRequest(
      method: "GET", target: target, headers: accept.map { [HTTPHeader("Accept", $0)] } ?? [],
      idleTimeout: idleTimeout, exchangeTimeout: exchangeTimeout)
  }

  /// A `POST` of a JSON document (`Content-Type: application/json`, as
  /// the server requires of every write).
  package static func post(
    _ target: String, json: [UInt8], exchangeTimeout: Double? = nil, retriesOnStaleConnection: Bool = false
  ) -> HTTPRequest {
    HTTPRequest(
      method: "POST", target: target,
      headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Accept", "application/json")],
      body: json, exchangeTimeout: exchangeTimeout, retriesOnStaleConnection: retriesOnStaleConnection)
  }
}
