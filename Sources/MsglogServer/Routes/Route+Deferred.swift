import Msglog

/// A write's route answers later, from the thread that commits its batch
/// (`EventLog.perform(_:buildingHere:then:)`): a worker does not sleep
/// through the commit, and one wake-up of an event loop answers a whole
/// batch. The router uses `deferred` where a route has one.
extension Route {
  /// How a deferred handler answers: `answer`, called once, from any
  /// thread. `buildsHere`: whether the calling thread may build and commit
  /// a batch itself (a worker may; an event loop, which must never wait
  /// for the store, may not).
  package struct Deferral: Sendable {
    package var buildsHere = true
    package let answer: @Sendable (Result<Response, any Error>) -> Void
  }

  /// A route whose handler answers later (`deferred`). Its handler must
  /// throw only before it has queued its work: once queued, what goes
  /// wrong is its answer.
  package init(
    _ method: Method, _ path: String, needsToken: Bool, permission: Permission? = nil, body: [Field]? = nil,
    success: Answer, refusals: [UInt32] = [], deferred: @escaping @Sendable (Request, Deferral) throws -> Void
  ) {
    self.init(
      method, path, needsToken: needsToken, permission: permission, body: body, success: success, refusals: refusals,
      handler: { request in try Self.waiting(for: deferred, request) })
    self.deferred = deferred
  }

  /// A deferred handler's answer, waited for on this thread (a router
  /// called without a way to answer later: tests, `Router.respond(to:)`).
  private static func waiting(
    for deferred: @Sendable (Request, Deferral) throws -> Void, _ request: Request
  ) throws -> Response {
    let answered = Guarded<Result<Response, any Error>?>(nil)
    try deferred(request, Deferral { result in answered.update { $0 = result } })
    return try answered.wait(until: { $0 != nil }) { result, _ in result! }.get()
  }
}
