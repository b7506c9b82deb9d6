/// A UTC instant with millisecond precision, as events record it.
///
/// Stored as milliseconds since the Unix epoch; printed as RFC 3339 with
/// exactly three fraction digits and `Z` (`2026-11-29T10:00:00.000Z`).
/// The conversion is done here, not by Foundation's formatters, so that output
/// is identical everywhere and costs no allocation beyond the string.
public struct Timestamp: Hashable, Comparable, Sendable {
  public var milliseconds: Int64

  public init(milliseconds: Int64) { self.milliseconds = milliseconds }

  public static func < (a: Timestamp, b: Timestamp) -> Bool { a.milliseconds < b.milliseconds }

  /// RFC 3339 UTC with milliseconds.
  public var rfc3339: String {
    var bytes: [UInt8] = []
    writeRFC3339(to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The same, appended to `out` as bytes (JSON output's path).
  package func writeRFC3339(to out: inout [UInt8]) {
    // `YYYY-MM-DDTHH:MM:SS.mmmZ`, 24 bytes made on the stack and appended
    // at once: `--json list` writes one per item, and a byte at a time
    // into the array was most of the cost of an item. Three words rather
    // than an `InlineArray<24, UInt8>`, whose initializer the optimizer
    // may leave out of line (a call per item).
    var text: (UInt64, UInt64, UInt64) = (0, 0, 0)
    let laidOut = withUnsafeMutableBytes(of: &text) { b in
      var p = b.baseAddress!.assumingMemoryBound(to: UInt8.self)
      guard writeRFC3339(at: &p) else { return false }
      out.append(contentsOf: b)
      return true
    }
    if laidOut { return }
    // A year outside 0…9999: as many digits as it has.
    let (days, rest) = daysAndRest
    let (y, m, d) = Timestamp.civil(fromDays: days)
    func digits(_ value: Int64, _ width: Int) {
      var divisor: Int64 = 1
      for _ in 1..<width { divisor *= 10 }
      while divisor > 0 {
        out.append(UInt8(truncatingIfNeeded: value / divisor % 10) &+ 0x30)
        divisor /= 10
      }
    }
    out.append(contentsOf: String(y).utf8)
    out.append(UInt8(ascii: "-"))
    digits(Int64(m), 2)
    out.append(UInt8(ascii: "-"))
    digits(Int64(d), 2)
    out.append(UInt8(ascii: "T"))
    digits(rest / 3_600_000, 2)
    out.append(UInt8(ascii: ":"))
    digits(rest / 60_000 % 60, 2)
    out.append(UInt8(ascii: ":"))
    digits(rest / 1000 % 60, 2)
    out.append(UInt8(ascii: "."))
    digits(rest % 1000, 3)
    out.append(UInt8(ascii: "Z"))
  }

  /// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`); digits past
  /// milliseconds are dropped. Nil for anything else.
  public init?(rfc3339 text: String) {
    var text = text
    guard let time = text.withUTF8({ Timestamp(rfc3339UTF8: UnsafeRawBufferPointer($0)) }) else { return nil }
    self = time
  }

  /// Parses RFC 3339 from UTF-8 bytes (the import scanner's path).
  package init?(rfc3339UTF8 b: UnsafeRawBufferPointer) {
    if b.count == 24, let time = Self.parseWritten(b) {
      self = time
      return
    }
    func digits(_ start: Int, _ count: Int) -> Int64? {
      guard start + count <= b.count else { return nil }
      var value: Int64 = 0
      for i in start..<(start + count) {
        guard (0x30...0x39).contains(b[i]) else { return nil }
        value = value * 10 + Int64(b[i] - 0x30)
      }
      return value
    }
    guard b.count >= 20,
      let year = digits(0, 4), b[4] == UInt8(ascii: "-"),
      let month = digits(5, 2), b[7] == UInt8(ascii: "-"),
      let day = digits(8, 2), b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t"),
      let hour = digits(11, 2), b[13] == UInt8(ascii: ":"),
      let minute = digits(14, 2), b[16] == UInt8(ascii: ":"),
      let second = digits(17, 2)
    else { return nil }
    var i = 19
    var millis: Int64 = 0
    if i < b.count, b[i] == UInt8(ascii: ".") {
      i += 1
      var count = 0
      while i < b.count, (0x30...0x39).contains(b[i]) {
        if count < 3 { millis = millis * 10 + Int64(b[i] - 0x30) }
        count += 1
        i += 1
      }
      guard count > 0 else { return nil }
      for _ in min(count, 3)..<3 { millis *= 10 }
    }
    guard i < b.count else { return nil }
    var offsetMinutes: Int64 = 0
    if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") {
      i += 1
    } else if b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
      guard let oh = digits(i + 1, 2), i + 3 < b.count, b[i + 3] == UInt8(ascii: ":"),
        let om = digits(i + 4, 2), oh < 24, om < 60
      else { return nil }
      offsetMinutes = (oh * 60 + om) * (b[i] == UInt8(ascii: "-") ? -1 : 1)
      i += 6
    } else {
      return nil
    }
    guard i == b.count,
      let time = Self.instant(year, month, day, hour, minute, second, millis, offsetMinutes: offsetMinutes)
    else { return nil }
    self = time
  }

  /// The instant of a date and a time of day read from RFC 3339 (both
  /// paths), its fields checked: nil for a day the month lacks, an hour
  /// past 23 and so on. A leap second is the second before it.
  @inline(__always)
  private static func instant(
    _ year: Int64, _ month: Int64, _ day: Int64, _ hour: Int64, _ minute: Int64, _ second: Int64, _ millis: Int64,
    offsetMinutes: Int64
  ) -> Timestamp? {
    guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60,
      second < 61
    else { return nil }
    let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + min(second, 59)
    return Timestamp(milliseconds: (seconds - offsetMinutes * 60) * 1000 + millis)
  }

  /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the form msglog writes (every exported
  /// line's time), read two digits at a time; nil for anything else, which
  /// the general path then reads (or refuses). The general path cost an
  /// import's parser about 500 instructions a line.
  @inline(__always)
  private static func parseWritten(_ b: UnsafeRawBufferPointer) -> Timestamp? {
    @inline(__always) func pair(_ i: Int) -> Int64? {
      let high = b[i] &- 0x30
      let low = b[i &+ 1] &- 0x30
      guard high < 10, low < 10 else { return nil }
      return Int64(high) &* 10 &+ Int64(low)
    }
    guard b[4] == UInt8(ascii: "-"), b[7] == UInt8(ascii: "-"), b[10] == UInt8(ascii: "T"),
      b[13] == UInt8(ascii: ":"), b[16] == UInt8(ascii: ":"), b[19] == UInt8(ascii: "."), b[23] == UInt8(ascii: "Z"),
      let century = pair(0), let yy = pair(2), let month = pair(5), let day = pair(8), let hour = pair(11),
      let minute = pair(14), let second = pair(17), let tens = pair(20), b[22] &- 0x30 < 10
    else { return nil }
    return instant(
      century &* 100 &+ yy, month, day, hour, minute, second, tens * 10 + Int64(b[22] &- 0x30), offsetMinutes: 0)
  }

  // Howard Hinnant's days-from-civil algorithms (proleptic Gregorian calendar).
  static func days(fromCivil y0: Int64, _ m: Int64, _ d: Int64) -> Int64 {
    let y = m <= 2 ? y0 - 1 : y0
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146_097 + doe - 719_468
  }

  /// The 24 bytes of `YYYY-MM-DDTHH:MM:SS.mmmZ` at `p`, which moves
  /// past them; false, writing nothing, for a year outside 0…9999.
  package func writeRFC3339(at p: inout UnsafeMutablePointer<UInt8>) -> Bool {
    let (days, rest) = daysAndRest
    let (y, m, d) = Timestamp.civil(fromDays: days)
    guard y >= 0 && y <= 9999 else { return false }
    let raw = UnsafeMutableRawPointer(p)
    Self.writeDate(y, m, d, at: raw)
    Self.writeTimeOfDay(rest, at: raw + 10)
    p += 24
    return true
  }

  /// The date (`YYYY-MM-DD`) that `writeRFC3339(at:day:)` last wrote
  /// through it: a document of many instants of one day (a chat's `list
  /// --json`) turns its day into digits once, not once an item.
  package struct RFC3339Day {
    /// The whole days since the epoch that `date` is; before the first,
    /// `Int64.min`, which no instant's days reach (they stay above −1.1e11).
    fileprivate var days = Int64.min
    /// The date's 10 bytes, in a word and a half-word.
    fileprivate var date: (UInt64, UInt16) = (0, 0)
    package init() {}
  }

  /// `writeRFC3339(at:)` with the date copied from `day` when the instant
  /// falls on its day, and made and kept there when not. A year outside
  /// 0…9999 writes nothing and leaves `day` as it was.
  package func writeRFC3339(at p: inout UnsafeMutablePointer<UInt8>, day: inout RFC3339Day) -> Bool {
    let (days, rest) = daysAndRest
    if days != day.days {
      let (y, m, d) = Timestamp.civil(fromDays: days)
      guard y >= 0 && y <= 9999 else { return false }
      withUnsafeMutableBytes(of: &day.date) { Self.writeDate(y, m, d, at: $0.baseAddress!) }
      day.days = days
    }
    let raw = UnsafeMutableRawPointer(p)
    raw.storeBytes(of: day.date.0, as: UInt64.self)
    raw.storeBytes(of: day.date.1, toByteOffset: 8, as: UInt16.self)
    Self.writeTimeOfDay(rest, at: raw + 10)
    p += 24
    return true
  }

  /// `value` in `width` decimal digits at `b + start`.
  @inline(__always)
  private static func put(_ value: Int64, at b: UnsafeMutableRawPointer, _ start: Int, _ width: Int) {
    var v = value
    var i = start + width
    while i > start {
      i -= 1
      b.storeBytes(of: UInt8(truncatingIfNeeded: v % 10) &+ 0x30, toByteOffset: i, as: UInt8.self)
      v /= 10
    }
  }

  /// The 10 bytes of `YYYY-MM-DD` at `b`.
  @inline(__always)
  private static func writeDate(_ y: Int64, _ m: Int64, _ d: Int64, at b: UnsafeMutableRawPointer) {
    put(y, at: b, 0, 4)
    b.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 4, as: UInt8.self)
    put(m, at: b, 5, 2)
    b.storeBytes(of: UInt8(ascii: "-"), toByteOffset: 7, as: UInt8.self)
    put(d, at: b, 8, 2)
  }

  /// The 14 bytes of `THH:MM:SS.mmmZ` at `b`, for `rest` milliseconds into the day.
  @inline(__always)
  private static func writeTimeOfDay(_ rest: Int64, at b: UnsafeMutableRawPointer) {
    // Two digits at a time from a table (`--json list` writes a time a line).
    let (seconds, milliseconds) = (Int(truncatingIfNeeded: rest / 1000), Int(truncatingIfNeeded: rest % 1000))
    b.storeBytes(of: UInt8(ascii: "T"), as: UInt8.self)
    DecimalDigits.writeTwo(seconds / 3600, at: b + 1)
    b.storeBytes(of: UInt8(ascii: ":"), toByteOffset: 3, as: UInt8.self)
    DecimalDigits.writeTwo(seconds / 60 % 60, at: b + 4)
    b.storeBytes(of: UInt8(ascii: ":"), toByteOffset: 6, as: UInt8.self)
    DecimalDigits.writeTwo(seconds % 60, at: b + 7)
    b.storeBytes(of: UInt8(ascii: "."), toByteOffset: 9, as: UInt8.self)
    b.storeBytes(of: UInt8(truncatingIfNeeded: milliseconds / 100) &+ 0x30, toByteOffset: 10, as: UInt8.self)
    DecimalDigits.writeTwo(milliseconds % 100, at: b + 11)
    b.storeBytes(of: UInt8(ascii: "Z"), toByteOffset: 13, as: UInt8.self)
  }

  /// Whole days since the epoch and the milliseconds into the last.
  private var daysAndRest: (Int64, Int64) {
    var days = milliseconds / 86_400_000
    var rest = milliseconds % 86_400_000
    if rest < 0 {
      rest += 86_400_000
      days -= 1
    }
    return (days, rest)
  }

  static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
    let z = z0 + 719_468
    let era = (z >= 0 ? z : z - 146_096) / 146_097
    let doe = z - era * 146_097
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
  }

  static func daysIn(month: Int64, year: Int64) -> Int64 {
    switch month {
    case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }
}
