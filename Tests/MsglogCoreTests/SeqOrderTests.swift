import Testing

@testable import MsglogCore

/// `SeqOrder.sort` puts keys where the standard library's sort does, for
/// any spread of seqs: none, a few, one seq, spans of 1 to 50 bits (one
/// to five passes, odd and even), seqs in order, reversed or shuffled.
@Suite struct SeqOrderTests {
  static let placeBits = Replay.placeBits

  static func keys(_ seqs: [UInt64]) -> [UInt64] {
    seqs.enumerated().map { place, seq in seq << placeBits | UInt64(place) }
  }

  static func check(_ seqs: [UInt64]) {
    var ours = keys(seqs)
    SeqOrder.sort(&ours, placeBits: placeBits)
    #expect(ours == keys(seqs).sorted(), "\(seqs.count) keys, first \(Array(seqs.prefix(4)))")
  }

  @Test(arguments: [0, 1, 2, 255, 256, 257, 1_000, 16_384])
  func anyCountOfShuffledSeqs(_ count: Int) {
    var generator = SystemRandomNumberGenerator()
    Self.check((0..<count).map { _ in UInt64.random(in: 1...300_000, using: &generator) })
  }

  @Test(arguments: [1, 2, 10, 11, 12, 22, 23, 33, 34, 50])
  func everySpanOfBits(_ bits: Int) {
    let base: UInt64 = 1 << 20
    let span: UInt64 = (1 << UInt64(bits)) - 1
    var seqs = (0..<5_000).map { _ in base + UInt64.random(in: 0...span) }
    seqs[0] = base
    seqs[1] = base + span
    Self.check(seqs)
  }

  @Test func seqsInOrderReversedOrAllOne() {
    let ascending = (1...5_000).map { UInt64($0) * 3 }
    Self.check(ascending)
    Self.check(ascending.reversed())
    Self.check([UInt64](repeating: 77, count: 1_000))
    Self.check((0..<1_000).map { UInt64($0 % 7 + 1) })
  }
}
