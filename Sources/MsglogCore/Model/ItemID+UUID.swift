/// The 16 bytes as a tuple: the type of Foundation's `uuid_t`, so that an
/// app converts without msglog importing Foundation (the library does not):
///
///     let uuid = UUID(uuid: item.id.uuid)
///     let id = ItemID(uuid: uuid.uuid)
extension ItemID {
  /// The id's 16 bytes in network order (RFC 9562's byte order, as
  /// Foundation's `UUID.uuid` holds them).
  public var uuid:
    (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)
  {
    withUnsafeBytes { b in
      (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
    }
  }

  /// The id with these 16 bytes (Foundation's `UUID.uuid`): any UUID, of
  /// any version, as `ItemID(bytes:)` takes it.
  public init(
    uuid: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8)
  ) {
    var value = uuid
    self = Swift.withUnsafeBytes(of: &value) { ItemID(bytes: $0) }
  }
}
