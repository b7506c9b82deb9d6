import Msglog
import MsglogWire

/// `list`, `replay`, `streams`, `diff`, `export`: one read snapshot each.
extension Invocation {
  /// Streams the items out as the order tree yields them: `list` of a
  /// million items holds one leaf in memory, not the list.
  func list() throws {
    let stream = try stream
    try printItems { snapshot, header, body in try snapshot.forEachItemBytes(of: stream, header: header, body) }
  }

  /// Streams the items out as the replay yields them: a full replay holds
  /// its fold and the records' places, not the items.
  func replay() throws {
    let stream = try stream
    let at = try args.number(Options.at)
    try printItems { snapshot, header, body in
      try snapshot.forEachReplayedItemBytes(of: stream, at: at, header: header, body)
    }
  }

  /// Prints the items `items` hands out of one read snapshot, as lines or
  /// as one JSON document, each written as it comes.
  private func printItems(
    _ items: (borrowing LogSnapshot, (StreamContents, Int) throws -> Void, (Int, ItemBytes) throws -> Void) throws ->
      Void
  ) throws {
    let json = json
    // Constants the item closure borrows: a `var` or `self.stdout` there
    // costs a retain and a release for every item.
    let out = stdout
    let lines = Format.ItemLineWriter(colour: colour)
    try read { snapshot in
      // Declared in the read: a read that runs again starts the document afresh.
      var writer = JSONWriter()
      var day = Timestamp.RFC3339Day()
      try items(
        snapshot,
        { header, count in
          lines.align(count: count)
          if json { writer.snapshotHead(header, count: count) }
        }
      ) { index, item in
        if json {
          // Straight into the output's buffer, with the comma the writer
          // would put between items: it holds the document's head (written
          // out with the first item, so that a read that fails before it
          // prints nothing) and tail.
          if index == 0 { try out.write(json: &writer) }
          try out.writing(upTo: 1 + JSONWriter.capacity(of: item)) { start in
            var p = start
            if index > 0 {
              p.pointee = UInt8(ascii: ",")
              p += 1
            }
            return p - start + JSONWriter.write(item, index: index, at: p, day: &day)
          }
        } else {
          try lines.write(item, index: index, to: out)
        }
      }
      if json {
        writer.snapshotTail()
        writer.raw("\n")
        try stdout.write(json: &writer)
      }
    }
  }

  func streams() throws {
    let (streams, sync) = try read { (try $0.streams(), try $0.syncBookkeeping()) }
    if json {
      try stdout.document { $0.streams(streams, sync: sync) }
    } else {
      try Format.streamsTable(streams, to: stdout)
      // What replicas leave here beside the events: no stream shows it.
      if sync.replicas > 0 {
        try stdout.line(
          "sync: \(sync.replicas) \(sync.replicas == 1 ? "replica" : "replicas"), \(sync.outcomes) "
            + "\(sync.outcomes == 1 ? "outcome" : "outcomes") kept, \(Self.mebibytes(sync.bytes)) MiB")
      }
    }
  }

  func diff() throws {
    let a = try number(at: 0, what: "seq A")
    let b = try number(at: 1, what: "seq B")
    let stream = try stream
    let diff = try read { try $0.diff(stream, from: a, to: b) }
    if json { try stdout.document { $0.diff(diff) } } else { try Format.diffLines(diff, colour: colour, to: stdout) }
  }

  /// Every event, or with an explicit `--stream` (not MSGLOG_STREAM, which
  /// would make a backup silently partial) that stream's only.
  func export() throws {
    let only = try args[Options.stream].map { name throws(MsglogError) in try StreamName(validating: name) }
    try read { snapshot in
      // A trimmed log begins with its bases, one line per stream.
      for base in try snapshot.exportedBases(stream: only) {
        var line = JSONWriter()
        line.base(base)
        try stdout.line(line.text)
      }
      var writer = Format.EventLineWriter()
      try snapshot.forEachEvent(stream: only) { event in
        try writer.write(event, to: stdout)
        return true
      }
    }
  }
}
