#if canImport(Glibc)
  import Glibc
#endif

extension Timestamp {
  /// The current UTC time, to the millisecond: what a new event records,
  /// unless `EventLog.Configuration.clock` says otherwise.
  public static func now() -> Timestamp {
    var spec = timespec()
    clock_gettime(CLOCK_REALTIME, &spec)
    return Timestamp(milliseconds: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
  }
}
