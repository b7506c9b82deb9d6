import Msglog
import MsglogWire

extension Invocation {
  /// `init`: the log's place made ready, with no event (`EventLog.initialize`).
  func initialize() throws {
    let log = try openLog(forWriting: true)
    let result = try log.initialize()
    if json { return try stdout.document { $0.logInitialization(result, location: log.location) } }
    let location = TerminalText.escape(log.location)
    switch result {
    case .created: try stdout.line("created an empty log in \(location)")
    case .madeTables(let tables):
      try stdout.line("made \(tables.joined(separator: " and ")) in \(location)")
    case .ready: try stdout.line("\(location) holds a log with every table it needs: nothing to do")
    }
  }
}
