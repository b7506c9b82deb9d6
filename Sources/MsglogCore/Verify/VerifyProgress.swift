/// How far a `verify` or a `repair` has come, for a progress display:
/// `done` of `total` in its current stage.
public struct VerifyProgress: Equatable, Sendable {
  public enum Stage: Equatable, Sendable {
    /// Reading, checking and replaying every event.
    case events
    /// Comparing each item's row of the id index with the replay.
    case ids
    /// Rebuilding the derived tables from the events (a repair).
    case rebuild
  }

  public var stage: Stage
  public var done: Int
  public var total: Int

  public init(stage: Stage, done: Int, total: Int) {
    self.stage = stage
    self.done = done
    self.total = total
  }

  /// How often a stage reports: every this many steps, and at its end.
  package static let interval = 1024
}
