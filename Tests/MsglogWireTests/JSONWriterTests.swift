import Msglog
import MsglogWire
import Testing

@testable import MsglogCore

@Suite struct JSONWriterTests {
  @Test(arguments: [UInt64(0), 7, 9, 10, 99, 100, 1_000_000, 12_345_678_901, UInt64(Int64.max), UInt64.max])
  func decimalsAreWrittenExactly(_ value: UInt64) {
    var out: [UInt8] = [0x2C]
    JSONWriter.appendDecimal(value, to: &out)
    #expect(out == [0x2C] + Array(String(value).utf8))
  }

  @Test func escapesOnlyWhatJSONNeeds() {
    var json = JSONWriter()
    json.object { o in
      o.member("text", "q\"b\\n\n\u{1}é\u{2028}")
      o.member("n", UInt64(7))
    }
    #expect(json.text == #"{"text":"q\"b\\n\n\u0001é\#u{2028}","n":7}"#)
  }

  @Test func theParserReadsWhatTheWriterWrites() throws {
    let tricky = "q\"b\\n\n\u{1}é👋🏽\u{2028}"
    var json = JSONWriter()
    json.object { $0.member("text", tricky) }
    #expect(try JSONParser.parse(json.take()) == .object([("text", .string(tricky))]))
  }

  /// Commas come from the nesting, at every depth: arrays of objects of
  /// arrays, empty containers, booleans, null, negative numbers.
  @Test func nestsObjectsAndArrays() throws {
    var json = JSONWriter()
    json.object { o in
      o.member("ok", true)
      o.key("empty")
      o.array { _ in }
      o.key("rows")
      o.array { rows in
        for i in 0..<3 {
          rows.object { row in
            row.member("i", i - 1)
            row.key("tags")
            row.array { tags in
              tags.value("a")
              tags.value(false)
              tags.null()
            }
          }
        }
      }
      o.key("none")
      o.object { _ in }
    }
    let expected =
      #"{"ok":true,"empty":[],"rows":[{"i":-1,"tags":["a",false,null]},{"i":0,"tags":["a",false,null]},"#
      + #"{"i":1,"tags":["a",false,null]}],"none":{}}"#
    #expect(json.text == expected)
    #expect(throws: Never.self) { try JSONParser.parse(expected) }
  }

  /// A long document written out in pieces comes out the same as written
  /// whole: emptying the buffer keeps the writer's place.
  @Test func aDocumentWrittenInPiecesIsTheSameAsWhole() {
    let items = (0..<5).map { i in
      Item(
        id: ItemID(), text: "item \(i)", sender: i % 2 == 0 ? "ann" : nil, time: Timestamp(milliseconds: 1000),
        seq: UInt64(i + 1))
    }
    let snapshot = StreamContents(stream: "main", seq: 5, version: 5, items: items)
    var whole = JSONWriter()
    whole.snapshot(snapshot)
    var pieces = JSONWriter()
    var out: [UInt8] = []
    pieces.snapshotHead(snapshot, count: items.count)
    for (index, item) in items.enumerated() {
      pieces.item(item, index: index)
      out += pieces.bytes
      pieces.removeAll()
    }
    pieces.snapshotTail()
    out += pieces.bytes
    #expect(out == whole.take())
  }
}
