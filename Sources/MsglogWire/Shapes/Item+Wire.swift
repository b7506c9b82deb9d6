import Msglog

extension JSONWriter {
  /// An item at its index, as `list --json` and `diff --json` show it.
  ///
  ///     {"index":0,"id":"…","text":"hi","sender":"ann","time":"…","seq":3}
  ///     {"index":1,"id":"…","text":"fixed","time":"…","seq":4,"edited":"…"}
  ///     {"index":2,"id":"…","text":"new","time":"…","pending":true}   (a replica's pending insert: no seq yet)
  ///     {"index":3,"id":"…","text":"","time":"…","seq":5,"erased":9}   (a past list: erased at seq 9 since)
  package mutating func item(_ item: Item, index: Int, textSeq: UInt64? = nil) {
    beginObject()
    laidOut("\"index\":", UInt64(index))
    laidOut(",\"id\":", item.id)
    laidOut(",\"text\":", item.text)
    if let sender = item.sender { laidOut(",\"sender\":", sender) }
    laidOut(",\"time\":", item.time)
    if item.seq > 0 { laidOut(",\"seq\":", item.seq) }
    if let edited = item.edited { laidOut(",\"edited\":", edited) }
    if let erased = item.erased { laidOut(",\"erased\":", erased) }
    if item.pending { laidOut(",\"pending\":", true) }
    if let textSeq { laidOut(",\"textSeq\":", textSeq) }
    endObject()
  }

  /// The same member for an item lent as bytes (`list`, `replay`).
  package mutating func item(_ item: ItemBytes, index: Int) {
    beginObject()
    laidOut("\"index\":", UInt64(index))
    laidOut(",\"id\":", item.id)
    laidOut(",\"text\":", utf8: item.text)
    if let sender = item.sender { laidOut(",\"sender\":", utf8: sender) }
    laidOut(",\"time\":", item.time)
    if item.seq > 0 { laidOut(",\"seq\":", item.seq) }
    if let edited = item.edited { laidOut(",\"edited\":", edited) }
    if let erased = item.erased { laidOut(",\"erased\":", erased) }
    if item.pending { laidOut(",\"pending\":", true) }
    endObject()
  }
}
