import MsglogLMDB

extension EventLog {
  /// For a command-line process: SIGINT, SIGTERM and SIGHUP remove the
  /// staging directories of databases being built (a first write, a
  /// backup) before they end the process as they would have.
  package static func removeStagingOnTerminatingSignals() {
    StagingCleanup.removeOnTerminatingSignals()
  }
}
