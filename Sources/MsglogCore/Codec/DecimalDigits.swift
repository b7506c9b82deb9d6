/// Numbers in decimal, written in place two digits a step from a table:
/// `--json list` writes an index and a seq a line, and a digit a step was
/// a tenth of its instructions. (The text list's line writer, in another
/// module, keeps its own: called from there, these were not inlined.)
package enum DecimalDigits {
  /// How many decimal digits `n` has (1 for 0; 20 at most).
  @inlinable @inline(__always)
  package static func count(_ n: UInt64) -> Int {
    var digits = 1
    var bound: UInt64 = 10
    while n >= bound && digits < 20 {
      digits += 1
      bound = bound &* 10
    }
    return digits
  }

  /// `n` in decimal, `digits` (`count(n)`) long, at `p`.
  @inlinable @inline(__always)
  package static func write(_ n: UInt64, digits: Int, at p: UnsafeMutablePointer<UInt8>) {
    let pairs = Self.pairs.utf8Start
    var v = n
    var q = p + digits
    while v >= 10 {
      let pair = Int(truncatingIfNeeded: v % 100) &* 2
      v /= 100
      q -= 2
      q[0] = pairs[pair]
      q[1] = pairs[pair + 1]
    }
    if q > p { p[0] = UInt8(truncatingIfNeeded: v) &+ 0x30 }
  }

  /// `n` (0…99) as two digits at `p`.
  @inlinable @inline(__always)
  package static func writeTwo(_ n: Int, at p: UnsafeMutableRawPointer) {
    assert(n >= 0 && n < 100, "two digits")
    p.storeBytes(
      of: UnsafeRawPointer(pairs.utf8Start).loadUnaligned(fromByteOffset: n &* 2, as: UInt16.self), as: UInt16.self)
  }

  /// "00" to "99", for two digits at a time (a literal: no lazy global).
  @inlinable
  package static var pairs: StaticString {
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
  }
}
