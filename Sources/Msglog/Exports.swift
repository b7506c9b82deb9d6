// The door shows the model: every `public` declaration of MsglogCore —
// `Event`, `Item`, `ItemID`, `StreamName`, `Timestamp`, `Outcome`,
// `StreamDiff`, `StreamContents`, `WriteRequest` and its parts,
// `VerifyReport`, `VerifyProgress`, `LogAccess`, `MsglogError` — comes with
// `import Msglog`.
// The machinery (codecs, trees, the ledger, the store protocols) is
// `package`: this package's command line, server, benchmark and tests use
// it, an app cannot. `DoorTests` compiles an app against the door to keep
// it so.
@_exported import MsglogCore
// The sync protocol's three public messages (`RemoteHello`, `PushAnswer`,
// `RecordPage`) come with it too; the rest of that module is `package`.
@_exported import MsglogSyncProtocol
