import Msglog

extension JSONWriter {
  /// An item at its index, as `list --json` and `diff --json` show it.
  ///
  ///     {"index":0,"id":"…","text":"hi","sender":"ann","time":"…","seq":3}
  ///     {"index":1,"id":"…","text":"fixed","time":"…","seq":4,"edited":"…"}
  package mutating func item(_ item: Item, index: Int) {
    beginObject()
    member("index", index)
    member("id", item.id)
    member("text", item.text)
    if let sender = item.sender { member("sender", sender) }
    member("time", item.time)
    member("seq", item.seq)
    if let edited = item.edited { member("edited", edited) }
    endObject()
  }
}
