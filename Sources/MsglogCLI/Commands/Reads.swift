import Msglog

/// `list`, `replay`, `streams`, `diff`, `export`: one read snapshot each.
extension Invocation {
  /// Streams the items out as the order tree yields them: `list` of a
  /// million items holds one leaf in memory, not the list.
  func list() throws {
    let stream = try stream
    let json = json
    let colour = colour
    try read { snapshot in
      var lines = Format.ItemLineWriter(count: 0, colour: colour)
      var writer = Format.ItemJSONWriter()
      try snapshot.forEachItem(
        of: stream,
        header: { header, count in
          lines = Format.ItemLineWriter(count: count, colour: colour)
          if json { try stdout.write(Format.snapshotJSONHead(header, count: count)) }
        }
      ) { index, item in
        if json {
          try writer.write(item, index: index, to: stdout)
        } else {
          try lines.write(item, index: index, to: stdout)
        }
      }
      if json { try stdout.line("]}") }
    }
  }

  func replay() throws {
    let stream = try stream
    let at = try args.number(Options.at)
    let snapshot = try read { try $0.replay(stream, at: at) }
    if json {
      try Format.writeSnapshotJSON(snapshot, to: stdout)
    } else {
      try Format.itemLines(snapshot, colour: colour, to: stdout)
    }
  }

  func streams() throws {
    let streams = try read { try $0.streams() }
    if json { try stdout.line(Format.streamsJSON(streams)) } else { try Format.streamsTable(streams, to: stdout) }
  }

  func diff() throws {
    let a = try number(at: 0, what: "seq A")
    let b = try number(at: 1, what: "seq B")
    let stream = try stream
    let diff = try read { try $0.diff(stream, from: a, to: b) }
    if json { try stdout.line(Format.diffJSON(diff)) } else { try Format.diffLines(diff, colour: colour, to: stdout) }
  }

  /// Every event, or with an explicit `--stream` (not MSGLOG_STREAM, which
  /// would make a backup silently partial) that stream's only.
  func export() throws {
    let only = try args[Options.stream].map { name throws(MsglogError) in try StreamName(validating: name) }
    try read { snapshot in
      var writer = Format.EventJSONWriter()
      try snapshot.forEachEvent(stream: only) { event in
        try writer.writeLine(event, to: stdout)
        return true
      }
    }
  }
}
