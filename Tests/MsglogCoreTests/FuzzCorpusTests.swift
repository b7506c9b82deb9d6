import Foundation
import Testing

@testable import MsglogCore

/// Every input kept under Fixtures/fuzz/ (seeds, and anything the fuzzers
/// ever find) runs through the same checks as the fuzz targets in Fuzz/.
@Suite struct FuzzCorpusTests {
  static func corpus(_ target: String) -> [URL] {
    let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz/" + target)
    return ((try? FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: nil)) ?? [])
      .sorted { $0.path < $1.path }
  }

  @Test func recordInputsRoundTripOrAreRefused() throws {
    let files = Self.corpus("record")
    #expect(files.count >= 3)
    var layouts: Set<String> = []
    for file in files {
      let bytes = [UInt8](try Data(contentsOf: file))
      if let event = try? EventRecord.decode(bytes) {
        // In its own layout: a framed record re-encodes framed, a whole one whole.
        #expect(EventRecord.isCanonical(bytes, of: event), "\(file.lastPathComponent)")
        layouts.insert(EventRecord.layout(of: bytes) == .framed ? "framed" : "whole")
      }
    }
    // The seeds hold records of both layouts, so the fuzzer starts from each.
    #expect(layouts == ["framed", "whole"])
  }

  @Test func importLineInputsParseWithinLimitsOrAreRefused() throws {
    let files = Self.corpus("import-line")
    #expect(files.count >= 3)
    for file in files {
      let bytes = [UInt8](try Data(contentsOf: file)).filter { $0 != 0x0A }
      // A trimmed log's base line, as its export begins: read whole.
      if bytes.withUnsafeBytes({ ImportedBase.isBaseLine($0) }) {
        let base = try ImportedBase(parsing: bytes)
        #expect(base.items.count == base.textSeqs.count && !base.items.isEmpty)
        continue
      }
      guard let request = try? ImportLine.parse(bytes, defaultStream: "main") else { continue }
      #expect((1...Limits.maxStreamNameBytes).contains(request.stream.bytes.count))
    }
  }
}
