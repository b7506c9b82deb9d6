import MsglogCore

#if canImport(Glibc)
  import Glibc
#endif

/// A large import's lines read in two halves at once, the second on a
/// thread of its own: reading lines is a third of an import into an empty
/// database (`BulkImport`), and needs nothing from the lines before.
enum ImportLineHalves {
  /// Inputs smaller than this are read on the calling thread.
  static let minimumBytes = 1 << 20

  typealias Lines = ([WriteRequest], [Int])

  /// What `read` of the whole of `body` gives: the requests in order, and
  /// the number of the line each came from; the first failing line's error
  /// (`MsglogError.line`), numbered in the whole input. `read` is given a
  /// part and the capacity its arrays should be made with: the first
  /// half's hold the whole input's lines, so that the second half's are
  /// appended without the first's being copied into bigger ones (which
  /// held both halves twice at once: a third of a large import's peak).
  static func read(
    _ body: UnsafeRawBufferPointer, _ read: @escaping (UnsafeRawBufferPointer, Int) throws(MsglogError) -> Lines
  )
    throws(MsglogError) -> Lines
  {
    guard body.count >= minimumBytes, let base = body.baseAddress,
      let newline = memchr(base + body.count / 2, 0x0A, body.count - body.count / 2)
    else { return try read(body, 0) }
    let split = UnsafeRawPointer(newline) - base + 1
    let first = UnsafeRawBufferPointer(rebasing: body[..<split])
    let second = Half(UnsafeRawBufferPointer(rebasing: body[split...]), read)
    guard second.start() else { return try read(body, 0) }
    let firstResult = Result { () throws(MsglogError) in try read(first, ImportLine.lineCount(body)) }
    let secondResult = second.join()
    var (requests, numbers) = try firstResult.get()
    // The second half's lines are numbered after the first half's.
    let before = ImportLine.lineCount(first)
    switch secondResult {
    case .success(let (moreRequests, moreNumbers)):
      requests.append(contentsOf: moreRequests)
      numbers.append(contentsOf: moreNumbers.lazy.map { $0 + before })
      return (requests, numbers)
    case .failure(.line(let n, let error)):
      throw .line(n + before, error)
    case .failure(let error):
      throw error
    }
  }

  /// The second half, read on a thread that `join` waits for. The bytes
  /// and the reading function outlive it: `read` joins before returning.
  private final class Half: @unchecked Sendable {
    let body: UnsafeRawBufferPointer
    let read: (UnsafeRawBufferPointer, Int) throws(MsglogError) -> Lines
    var result: Result<Lines, MsglogError>? = nil
    var thread = pthread_t()

    init(_ body: UnsafeRawBufferPointer, _ read: @escaping (UnsafeRawBufferPointer, Int) throws(MsglogError) -> Lines) {
      self.body = body
      self.read = read
    }

    /// Starts the thread; false when the system would start none.
    func start() -> Bool {
      let this = Unmanaged.passRetained(self).toOpaque()
      let rc = pthread_create(
        &thread, nil,
        { raw in
          let half = Unmanaged<Half>.fromOpaque(raw!).takeRetainedValue()
          half.result = Result { () throws(MsglogError) in try half.read(half.body, 0) }
          return nil
        }, this)
      if rc != 0 { Unmanaged<Half>.fromOpaque(this).release() }
      return rc == 0
    }

    func join() -> Result<Lines, MsglogError> {
      pthread_join(thread, nil)
      return result!
    }
  }
}
