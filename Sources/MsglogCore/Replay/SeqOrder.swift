/// Sorting a batch of record keys (a seq above `placeBits` bits of its
/// place in the batch) into seq order, for reading the records in one
/// ascending pass (`Replay.records(at:in:)`).
///
/// A least-significant-digit radix sort over the bits in which the seqs
/// differ, in at most 11-bit digits: the 104,852 seqs of automerge-paper's
/// list span 18 bits, two passes, 54 instructions a key, where the
/// standard library's merge sort took 98 (`list` 139.00 → 133.28 M
/// instructions). A list in nearly seq order gives the merge sort long
/// runs: there (sveltecomponent) the two cost about the same. Each pass is
/// stable and the places come in ascending, so keys of equal seqs (none
/// in a list) still come out ascending.
enum SeqOrder {
  /// Fewer keys than this are sorted by the standard library: a pass's
  /// counts would cost more than they save.
  static let radixFrom = 256
  /// The widest digit: 2,048 counts, 16 KiB, which stay in the L1 cache.
  static let digitBitsAtMost = 11

  static func sort(_ keys: inout [UInt64], placeBits: Int) {
    guard keys.count >= radixFrom else { return keys.sort() }
    var low = UInt64.max
    var high: UInt64 = 0
    for key in keys {
      let seq = key &>> UInt64(placeBits)
      low = min(low, seq)
      high = max(high, seq)
    }
    let bits = UInt64.bitWidth - (high &- low).leadingZeroBitCount
    guard bits > 0 else { return keys.sort() }  // one seq: by place
    let passes = (bits + digitBitsAtMost - 1) / digitBitsAtMost
    let digitBits = (bits + passes - 1) / passes
    let digitMask = UInt64(1 << digitBits - 1)
    let count = keys.count
    // Masking shifts and wrapping sums: no checks in the loops (a shift is
    // below 64, a count below the keys').
    let place = UInt64(placeBits)
    var other = [UInt64](repeating: 0, count: count)
    var counts = [Int](repeating: 0, count: 1 << digitBits)
    keys.withUnsafeMutableBufferPointer { keys in
      other.withUnsafeMutableBufferPointer { other in
        counts.withUnsafeMutableBufferPointer { counts in
          var from = keys.baseAddress!
          var to = other.baseAddress!
          let tally = counts.baseAddress!
          for pass in 0..<passes {
            let shift = UInt64(pass * digitBits)
            tally.update(repeating: 0, count: counts.count)
            for k in 0..<count {
              let d = Int(truncatingIfNeeded: ((from[k] &>> place) &- low) &>> shift & digitMask)
              tally[d] &+= 1
            }
            var start = 0
            for d in 0..<counts.count {
              let n = tally[d]
              tally[d] = start
              start &+= n
            }
            for k in 0..<count {
              let key = from[k]
              let d = Int(truncatingIfNeeded: ((key &>> place) &- low) &>> shift & digitMask)
              to[tally[d]] = key
              tally[d] &+= 1
            }
            swap(&from, &to)
          }
          // After an odd number of passes the keys are in `other`.
          if passes % 2 == 1 { keys.baseAddress!.update(from: other.baseAddress!, count: count) }
        }
      }
    }
  }
}
