#if canImport(Glibc)
  import Glibc
#endif

/// The process's own figures, as Prometheus's client libraries name them,
/// read from /proc when `/metrics` is asked for.
struct ProcessFigures {
  var residentBytes: Double = 0
  var cpuSeconds: Double = 0
  var openDescriptors: Double = 0
  var maxDescriptors: Double = 0
  var startTime: Double = 0

  static func now() -> ProcessFigures {
    var figures = ProcessFigures()
    let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
    // /proc/self/stat: the fields after the command's closing parenthesis,
    // from the state (field 3) on: utime is field 14, stime 15, starttime 22, rss 24.
    if let stat = read("/proc/self/stat"), let close = stat.lastIndex(of: ")") {
      let fields = stat[stat.index(after: close)...].split(separator: " ")
      func field(_ n: Int) -> Double { n - 3 < fields.count ? Double(fields[n - 3]) ?? 0 : 0 }
      figures.cpuSeconds = (field(14) + field(15)) / ticks
      figures.residentBytes = field(24) * Double(sysconf(Int32(_SC_PAGESIZE)))
      if let boot = read("/proc/stat")?.split(separator: "\n").first(where: { $0.hasPrefix("btime ") }) {
        figures.startTime = (Double(boot.dropFirst(6)) ?? 0) + field(22) / ticks
      }
    }
    if let directory = opendir("/proc/self/fd") {
      var count = 0
      while let entry = readdir(directory) {
        if entry.pointee.d_name.0 != UInt8(ascii: ".") { count += 1 }
      }
      closedir(directory)
      figures.openDescriptors = Double(count - 1)  // the directory's own
    }
    var limit = rlimit()
    if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { figures.maxDescriptors = Double(limit.rlim_cur) }
    return figures
  }

  func write(into out: inout PrometheusText) {
    out.family("process_resident_memory_bytes", .gauge, "Resident memory size in bytes.")
    out.sample("process_resident_memory_bytes", [], residentBytes)
    out.family("process_cpu_seconds_total", .counter, "User and system CPU time spent, in seconds.")
    out.sample("process_cpu_seconds_total", [], cpuSeconds)
    out.family("process_open_fds", .gauge, "Open file descriptors.")
    out.sample("process_open_fds", [], openDescriptors)
    out.family("process_max_fds", .gauge, "The most open file descriptors allowed.")
    out.sample("process_max_fds", [], maxDescriptors)
    out.family("process_start_time_seconds", .gauge, "When the process started, in seconds since 1970.")
    out.sample("process_start_time_seconds", [], startTime)
  }

  private static func read(_ path: String) -> String? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, 4096) }
      if n <= 0 { break }
      bytes += buffer[..<n]
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
