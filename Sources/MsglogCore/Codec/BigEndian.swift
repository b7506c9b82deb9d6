@inline(__always)
func readBigEndian<T: FixedWidthInteger>(_ bytes: UnsafeRawBufferPointer, at offset: Int, as: T.Type) -> T {
  T(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
}

extension Array where Element == UInt8 {
  mutating func appendBigEndian<T: FixedWidthInteger>(_ value: T) {
    var v = value.bigEndian
    Swift.withUnsafeBytes(of: &v) { append(contentsOf: $0) }
  }
}
