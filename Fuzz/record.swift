import MsglogCore

/// Any bytes: decoding never crashes, and whatever decodes is exactly the
/// encoding of what it decoded to (no two byte strings mean the same event).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecord(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if let event = try? EventRecord.decode(bytes) {
    precondition(EventRecord.isCanonical(bytes, of: event), "decode/encode round trip differs")
  }
  return 0
}
