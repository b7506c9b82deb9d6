/// A stream's order tree kept in the store: nodes are read through a
/// transaction, changed in a cache, and written back by `flush`.
///
/// A write touches one node per level (plus, now and then, a split or a
/// merge), so its cost does not grow with the stream: the order is never
/// loaded whole. Read-only use (`list`) caches nothing, so memory stays flat
/// however long the stream.
package struct StoredNodes: TreeNodeStore {
  package typealias Element = Slot
  let reader: any LogReader
  let writer: (any LogWriter)?
  package let stream: StreamName
  var cache: [NodeID: TreeNode<Slot>] = [:]
  var dirty: Set<NodeID> = []
  var freed: Set<NodeID> = []
  package private(set) var nextNode: NodeID
  /// Leaves that items moved into since the last flush (for the id index).
  package private(set) var placements: [ItemID: NodeID] = [:]
  /// Nodes allocated less nodes freed since the last flush (for the summary).
  package private(set) var nodeDelta = 0

  /// Reads and writes through `writer`.
  package init(writer: any LogWriter, stream: StreamName, nextNode: NodeID) {
    self.reader = writer
    self.writer = writer
    self.stream = stream
    self.nextNode = max(nextNode, 1)
  }

  /// Reads only, caching nothing.
  package init(reader: any LogReader, stream: StreamName) {
    self.reader = reader
    self.writer = nil
    self.stream = stream
    self.nextNode = 1
  }

  package func read<R>(_ id: NodeID, _ body: (TreeNode<Slot>) throws -> R) throws -> R {
    if let node = cache[id] { return try body(node) }
    guard id != 0, let node = try reader.orderNode(id, of: stream) else {
      throw DerivedDamage(.order, "the order of stream \(TerminalText.quoted(stream)) lacks node \(id)")
    }
    return try body(node)
  }

  package mutating func update<R>(_ id: NodeID, _ body: (inout TreeNode<Slot>) throws -> R) throws -> R {
    precondition(writer != nil, "a read-only order tree was changed")
    if cache[id] == nil { cache[id] = try read(id) { $0 } }
    dirty.insert(id)
    return try body(&cache[id]!)
  }

  package mutating func allocate(_ node: TreeNode<Slot>) throws -> NodeID {
    let id = nextNode
    nextNode += 1
    nodeDelta += 1
    cache[id] = node
    dirty.insert(id)
    return id
  }

  package mutating func free(_ id: NodeID) throws {
    cache[id] = nil
    dirty.remove(id)
    freed.insert(id)
    nodeDelta -= 1
  }

  package var tracksPlacements: Bool { true }

  package mutating func placed(_ elements: ArraySlice<Slot>, in leaf: NodeID) throws {
    for slot in elements { placements[slot.id] = leaf }
  }

  /// Writes changed nodes and deletes freed ones; returns and forgets the
  /// placements and the change in the number of nodes.
  package mutating func flush() throws -> (placements: [ItemID: NodeID], nodeDelta: Int) {
    guard let writer else { return ([:], 0) }
    for id in dirty { try writer.putOrderNode(cache[id]!, id: id, of: stream) }
    for id in freed { try writer.deleteOrderNode(id, of: stream) }
    dirty.removeAll()
    freed.removeAll()
    cache.removeAll(keepingCapacity: true)
    defer {
      placements.removeAll()
      nodeDelta = 0
    }
    return (placements, nodeDelta)
  }
}
