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
}

extension JSONWriter {
  /// Room for what `write(_:index:at:)` writes for `item`: keys and
  /// punctuation (under 160 bytes), the index and two seqs (20 digits
  /// each), the id, two times, and the text and sender escaped (exactly,
  /// so that a long text fills the output's buffer as it would appended).
  package static func capacity(of item: ItemBytes) -> Int {
    160 + 3 * 20 + 2 * quotedTimeCapacity + escapedLength(item.text.assumingMemoryBound(to: UInt8.self))
      + (item.sender.map { escapedLength($0.assumingMemoryBound(to: UInt8.self)) } ?? 0)
  }

  /// `item(_:index:)`'s bytes for an item lent as bytes (`list --json`,
  /// `replay --json`), written at `start` (room for `capacity(of:)`); how
  /// many. `day` is the document's: the date of the last time written.
  package static func write(
    _ item: ItemBytes, index: Int, at start: UnsafeMutablePointer<UInt8>, day: inout Timestamp.RFC3339Day
  ) -> Int {
    var p = start
    write("{\"index\":", to: &p)
    write(decimal: UInt64(index), to: &p)
    write(",\"id\":\"", to: &p)
    item.id.writeText(into: p)
    p += 36
    write("\",\"text\":\"", to: &p)
    write(escaped: item.text.assumingMemoryBound(to: UInt8.self), to: &p)
    if let sender = item.sender {
      write("\",\"sender\":\"", to: &p)
      write(escaped: sender.assumingMemoryBound(to: UInt8.self), to: &p)
    }
    write("\",\"time\":", to: &p)
    write(quoted: item.time, day: &day, to: &p)
    if item.seq > 0 {
      write(",\"seq\":", to: &p)
      write(decimal: item.seq, to: &p)
    }
    if let edited = item.edited {
      write(",\"edited\":", to: &p)
      write(quoted: edited, day: &day, to: &p)
    }
    if let erased = item.erased {
      write(",\"erased\":", to: &p)
      write(decimal: erased, to: &p)
    }
    if item.pending { write(",\"pending\":true", to: &p) }
    write("}", to: &p)
    return p - start
  }
}
