import Msglog

extension JSONWriter {
  /// What `erase --json` prints and `POST /api/erase` answers:
  ///
  ///     {"erased":["…","…"],"events":5,"seq":47}
  ///     {"erased":[],"events":0}                   (nothing to erase)
  ///
  /// `erased`: the items erased now; `events`: the inserts and edits whose
  /// text it blanked; `seq`: its last erase event.
  /// With `--purge`, `"purged":B` follows: the bytes `purge` scrubbed.
  package mutating func erasure(_ erasure: EventLog.Erasure, purged: UInt64? = nil) {
    beginObject()
    key("erased")
    array { json in
      for id in erasure.erased { json.value(id) }
    }
    member("events", erasure.events)
    if let seq = erasure.seq { member("seq", seq) }
    if let purged { member("purged", purged) }
    endObject()
  }
}
