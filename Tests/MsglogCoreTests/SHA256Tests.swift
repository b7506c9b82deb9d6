import Testing

@testable import MsglogCore

/// SHA-256 against the known answers of FIPS 180-4's examples and NIST's
/// byte-oriented test vectors (SHA256ShortMsg.rsp, SHA256LongMsg.rsp),
/// through each padding case: a message ending just before, at and after
/// the 55/56/64-byte boundaries, and one fed in pieces.
@Suite struct SHA256Tests {
  @Test(arguments: [
    ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
    (
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    ),
    (
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
    ),
    ("The quick brown fox jumps over the lazy dog", "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"),
  ])
  func knownAnswers(_ message: String, _ digest: String) {
    #expect(SHA256.hash(Array(message.utf8)).hex == digest)
  }

  /// NIST's byte vectors (SHA256ShortMsg.rsp, Len = 8 and 16).
  @Test(arguments: [
    ("d3", "28969cdfa74a12c82f3bad960b0b000aca2ac329deea5c2328ebc6f2ba9802c1"),
    ("11af", "5ca7133fa735326081558ac312c620eeca9970d1e70a4b95533d956f072d1f98"),
  ])
  func nistByteVectors(_ hex: String, _ digest: String) {
    #expect(SHA256.hash(Hex.bytes(hex.utf8)!).hex == digest)
  }

  /// Each side of the padding's boundaries: 55 bytes (the length fits the
  /// last block), 56 and 63 (it does not), 64 (a whole block), 65, 119,
  /// 120; byte i is 7i+3. The answers are Python's hashlib's, another
  /// implementation.
  @Test(arguments: [
    (55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"),
    (56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"),
    (63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"),
    (64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"),
    (65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"),
    (119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"),
    (120, "7836b787757e95e58b3ca5aec90b1b004e8deba1e50e9675af9cabf1a13a04b5"),
  ])
  func paddingBoundaries(_ length: Int, _ digest: String) {
    let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
    #expect(SHA256.hash(message).hex == digest)
  }

  @Test func oneMillionAs() {
    // FIPS 180-4's long example.
    var hash = SHA256()
    let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
    for _ in 0..<1000 { hash.update(chunk) }
    #expect(hash.finalize().hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
  }

  @Test func piecesHashAsTheWhole() {
    // Every length through three blocks, fed whole and in uneven pieces.
    var message: [UInt8] = []
    for length in 0..<200 {
      let whole = SHA256.hash(message)
      var hash = SHA256()
      var start = 0
      var piece = 1
      while start < message.count {
        let end = min(message.count, start + piece)
        hash.update(message[start..<end])
        start = end
        piece = piece % 67 + 13
      }
      #expect(hash.finalize().hex == whole.hex, "length \(length)")
      message.append(UInt8(truncatingIfNeeded: length &* 31 &+ 7))
    }
  }

  @Test func digestsCompareInFull() {
    let a = SHA256.hash(Array("a".utf8))
    #expect(a.matches(SHA256.hash(Array("a".utf8))))
    #expect(!a.matches(SHA256.hash(Array("b".utf8))))
    var last = a.bytes
    last[31] ^= 1
    #expect(!a.matches(SHA256.Digest(last)!))
    #expect(SHA256.Digest([1, 2, 3]) == nil)
  }
}
