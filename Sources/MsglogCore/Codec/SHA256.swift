/// SHA-256 (FIPS 180-4), for what msglog keeps of a secret: a replica's
/// secret at its remote (docs/SYNC.md), a named token's at its server.
///
/// The toolchain has none on Linux (swift-crypto is a package we cannot
/// fetch, Foundation's `CommonCrypto` is Apple's), so here is one: small,
/// portable, checked against NIST's known answers (`SHA256Tests`). It hashes
/// short secrets, not files: clarity over speed.
///
///     var hash = SHA256()
///     hash.update(secret)
///     let digest = hash.finalize()        // or SHA256.hash(secret)
///     digest.matches(stored)              // in constant time
package struct SHA256 {
  /// The working state: eight 32-bit words.
  private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) = (
    0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19
  )
  /// Bytes not yet compressed (fewer than a block).
  private var pending: [UInt8] = []
  /// Every byte given so far.
  private var length: UInt64 = 0

  package init() { pending.reserveCapacity(64) }

  /// The digest of `bytes`.
  package static func hash(_ bytes: some Sequence<UInt8>) -> Digest {
    var hash = SHA256()
    hash.update(bytes)
    return hash.finalize()
  }

  /// Adds `bytes` to what is hashed.
  package mutating func update(_ bytes: some Sequence<UInt8>) {
    for byte in bytes {
      pending.append(byte)
      length &+= 1
      if pending.count == 64 {
        compress(pending)
        pending.removeAll(keepingCapacity: true)
      }
    }
  }

  /// The digest of everything given; the hash is spent.
  package consuming func finalize() -> Digest {
    let bits = length &* 8
    var tail = pending
    tail.append(0x80)
    while tail.count % 64 != 56 { tail.append(0) }
    tail.appendBigEndian(bits)
    for start in stride(from: 0, to: tail.count, by: 64) { compress(tail[start..<start + 64]) }
    var out: [UInt8] = []
    out.reserveCapacity(32)
    for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
      out.appendBigEndian(word)
    }
    return Digest(bytes: out)
  }

  /// One 64-byte block into the state.
  private mutating func compress(_ block: some Collection<UInt8>) {
    var w = [UInt32](repeating: 0, count: 64)
    var i = 0
    var index = block.startIndex
    while i < 16 {
      var word: UInt32 = 0
      for _ in 0..<4 {
        word = word << 8 | UInt32(block[index])
        index = block.index(after: index)
      }
      w[i] = word
      i += 1
    }
    while i < 64 {
      let s0 = w[i - 15].rotatedRight(7) ^ w[i - 15].rotatedRight(18) ^ (w[i - 15] >> 3)
      let s1 = w[i - 2].rotatedRight(17) ^ w[i - 2].rotatedRight(19) ^ (w[i - 2] >> 10)
      w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
      i += 1
    }
    var (a, b, c, d, e, f, g, h) = state
    for i in 0..<64 {
      let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
      let choice = (e & f) ^ (~e & g)
      let t1 = h &+ s1 &+ choice &+ Self.k[i] &+ w[i]
      let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
      let majority = (a & b) ^ (a & c) ^ (b & c)
      let t2 = s0 &+ majority
      (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
    }
    state = (
      state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d, state.4 &+ e, state.5 &+ f, state.6 &+ g, state.7 &+ h
    )
  }

  /// The round constants: the first 32 bits of the fractional parts of the
  /// cube roots of the first 64 primes.
  private static let k: [UInt32] = [
    0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
    0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
    0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
    0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
    0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
    0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
    0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
    0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
  ]

  /// A SHA-256 digest: 32 bytes.
  package struct Digest: Sendable, CustomStringConvertible {
    package let bytes: [UInt8]

    /// A digest's length in bytes.
    package static let length = 32

    /// 32 bytes as a digest; nil for any other length.
    package init?(_ bytes: [UInt8]) {
      guard bytes.count == 32 else { return nil }
      self.bytes = bytes
    }

    fileprivate init(bytes: [UInt8]) { self.bytes = bytes }

    /// Whether `other` is this digest, in time that does not depend on
    /// where they differ: a stored hash compared with one made from what a
    /// client sent tells an attacker nothing of how close it came.
    package func matches(_ other: Digest) -> Bool {
      var difference: UInt8 = 0
      for (a, b) in zip(bytes, other.bytes) { difference |= a ^ b }
      return difference == 0
    }

    /// Lowercase hex, 64 digits.
    package var hex: String {
      var out: [UInt8] = []
      out.reserveCapacity(64)
      for byte in bytes {
        out.append(Hex.digit(byte >> 4))
        out.append(Hex.digit(byte))
      }
      return String(decoding: out, as: UTF8.self)
    }

    package var description: String { hex }
  }
}

extension UInt32 {
  @inline(__always)
  fileprivate func rotatedRight(_ n: UInt32) -> UInt32 { self >> n | self << (32 - n) }
}
