import MsglogLMDB

extension EventLog {
  /// For a command-line process: SIGINT, SIGTERM and SIGHUP remove the
  /// staging directories of databases being built (a first write, a
  /// backup) before they end the process as they would have.
  package static func removeStagingOnTerminatingSignals() {
    StagingCleanup.removeOnTerminatingSignals()
  }

  /// Removes the staging directories of databases being built, from a
  /// signal handler that ends the process (async-signal-safe: unlink(2),
  /// rmdir(2)): a read that faults on a file cut short (SIGBUS) leaves no
  /// half-made backup behind.
  package static func removeStagingDirectories() {
    StagingCleanup.removeAll()
  }
}
