import MsglogCore

/// Any bytes as an import line: parsing never crashes, an accepted line
/// respects docs/REFERENCE.md's limits once it passes the ledger's check of
/// its values (`Limits.check`), and the fast scanner agrees with the
/// general parser on every line it takes.
///
/// A base line (what a trimmed log's export begins with, read by
/// `ImportedBase`) is read or refused, never a crash; one that reads has
/// a text seq exactly for its edited items.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImportLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  if bytes.withUnsafeBytes({ ImportedBase.isBaseLine($0) }) {
    if let base = try? ImportedBase(parsing: bytes) {
      precondition(base.items.count == base.textSeqs.count)
      for (item, textSeq) in zip(base.items, base.textSeqs) { precondition((textSeq == nil) == (item.edited == nil)) }
    }
    return 0
  }
  precondition(bytes.withUnsafeBytes { ImportLine.scannerAgreesWithGeneralParser($0) }, "scanner and parser disagree")
  guard let request = try? ImportLine.parse(bytes, defaultStream: "main") else { return 0 }
  precondition((1...Limits.maxStreamNameBytes).contains(request.stream.bytes.count))
  guard (try? Limits.check(request)) != nil else { return 0 }
  if case .insert(let insert) = request.command {
    precondition((1...Limits.maxTextBytes).contains(insert.text.utf8.count))
  }
  return 0
}
