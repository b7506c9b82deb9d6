/// What a follower says while it cannot follow: the store went away (a
/// server restarted, a connection was cut) and it tries again.
public enum FollowNotice: Sendable {
  /// Lost: it tries again after `delay`, and goes on from seq `resumeFrom`.
  case reconnecting(error: MsglogError, delay: Duration, resumeFrom: UInt64)
  /// Following again.
  case reconnected
}
