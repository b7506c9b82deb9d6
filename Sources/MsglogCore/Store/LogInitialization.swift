/// What making a log's place ready did (`msglog init`): it is safe to ask
/// again, and says each time what it found.
public enum LogInitialization: Equatable, Sendable {
  /// There was no log: an empty one was made, with every table it may need.
  case created
  /// The log was there, made by an older msglog: the tables it lacked
  /// were made (named as messages name them).
  case madeTables([String])
  /// The log was there with every table it needs: nothing was done.
  case ready
}
