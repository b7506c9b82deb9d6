import CCRC32C

/// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of every
/// event record.
///
/// Chosen over CRC-32 (zlib) because it detects more error patterns at record
/// sizes and is what storage formats (iSCSI, ext4, LevelDB) use; Python has it
/// as `crc32c` on PyPI, and docs/FORMAT.md gives a 6-line version.
///
/// With the CPU's CRC32 instruction where it has one (SSE4.2 on x86-64, the
/// CRC extension on AArch64; checked once at run time), about 8× faster than
/// the tables; otherwise slicing-by-8: eight bytes per step through eight
/// tables, kept in one flat buffer so the hot loop does no bounds checks and
/// no reference counting. Both give the same checksum (tested).
package enum CRC32C {
  /// Whether `update` uses the instruction.
  package static let usesHardware = msglog_crc32c_hardware_available() != 0

  /// 8 × 256 entries; table k at offset 256·k. Built once, never freed.
  nonisolated(unsafe) static let table: UnsafePointer<UInt32> = {
    let t = UnsafeMutablePointer<UInt32>.allocate(capacity: 8 * 256)
    for n in 0..<256 {
      var c = UInt32(n)
      for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
      t[n] = c
    }
    for n in 0..<256 {
      for k in 1..<8 {
        let prev = t[(k - 1) * 256 + n]
        t[k * 256 + n] = (prev >> 8) ^ t[Int(prev & 0xFF)]
      }
    }
    return UnsafePointer(t)
  }()

  /// The checksum of `bytes`.
  package static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
    update(0, bytes)
  }

  package static func checksum(_ bytes: [UInt8]) -> UInt32 {
    bytes.withUnsafeBytes { update(0, $0) }
  }

  /// Continues a checksum over more bytes.
  @inline(__always)
  package static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress else { return crc }
    if msglog_crc32c_uses_hardware() != 0 { return msglog_crc32c_hardware(crc, base, bytes.count) }
    return tableUpdate(crc, bytes)
  }

  /// The portable version, slicing-by-8.
  package static func tableUpdate(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress else { return crc }
    let t = table
    var c = ~crc
    var p = base
    var n = bytes.count
    while n >= 8 {
      let word = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
      let x = UInt32(truncatingIfNeeded: word) ^ c
      let hi = UInt32(truncatingIfNeeded: word >> 32)
      c =
        t[7 * 256 + Int(x & 0xFF)] ^ t[6 * 256 + Int((x >> 8) & 0xFF)]
        ^ t[5 * 256 + Int((x >> 16) & 0xFF)] ^ t[4 * 256 + Int(x >> 24)]
        ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)]
        ^ t[256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
      p += 8
      n -= 8
    }
    while n > 0 {
      c = (c >> 8) ^ t[Int((c ^ UInt32(p.load(as: UInt8.self))) & 0xFF)]
      p += 1
      n -= 1
    }
    return ~c
  }
}
