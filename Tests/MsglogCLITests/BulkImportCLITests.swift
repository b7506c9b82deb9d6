import Foundation
import Msglog
import MsglogTestSupport
import Testing

/// `msglog import` into an empty database takes the bulk path
/// (`BulkImport`): what it builds verifies clean and exports the same lines.
@Suite struct BulkImportCLITests {
  @Test func anImportIntoAnEmptyDatabaseVerifiesAndExportsTheSameLines() throws {
    let s = Sandbox()
    let source = s.dir + "/source.lmdb", copy = s.dir + "/copy.lmdb"
    do { _ = try EventLog(source).perform(workload(count: 3_000)) }
    let exported = s.run(["--db", source, "export"], useDefaultDB: false)
    #expect(exported.code == 0)
    let imported = s.run(["--db", copy, "import"], stdin: Data(exported.stdout.utf8), useDefaultDB: false)
    #expect(imported.code == 0, "\(imported)")
    #expect(imported.stdout.hasPrefix("imported "), "\(imported.stdout)")
    let verified = s.run(["--db", copy, "verify"], useDefaultDB: false)
    #expect(verified.code == 0, "\(verified)")
    #expect(s.run(["--db", copy, "export"], useDefaultDB: false).stdout == exported.stdout)
  }
}
