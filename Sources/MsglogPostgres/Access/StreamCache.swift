import MsglogCore

extension PostgresStore {
  /// What a write transaction knows of streams without asking the server:
  /// fetched by its opening round trip (`Opening.prefetch`) or left by the
  /// process's last write (`KnownState`), then kept as its own reads and
  /// writes change them — so that a read of it costs no round trip.
  struct StreamCache {
    /// Each stream's head; `.some(nil)`: it has none.
    var heads: [StreamName: StreamHead?] = [:]
    /// Each stream's last event; `.some(nil)`: it has none.
    var last: [StreamName: (seq: UInt64, record: [UInt8])?] = [:]
    /// Order-tree nodes, as the transaction leaves them.
    var nodes: [NodeKey: TreeNode<Slot>] = [:]
    /// Whether the transaction changed derived rows the cache does not
    /// follow (a rebuild, a bulk load): nothing of it is kept after the commit.
    private(set) var isForgotten = false

    /// Forgets the derived rows, for a transaction that writes past them.
    /// The last events stay: events are never rewritten.
    mutating func forget() {
      heads.removeAll()
      nodes.removeAll()
      isForgotten = true
    }
  }

  /// An order-tree node's key, or a checkpoint's (`n` is then its seq).
  struct NodeKey: Hashable {
    var stream: StreamName
    var n: UInt64
  }
}
