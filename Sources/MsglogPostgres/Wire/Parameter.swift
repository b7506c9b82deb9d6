import CLibPQ
import MsglogCore

/// A statement's parameter, sent in PostgreSQL's binary format.
struct Parameter {
  var type: Oid
  /// nil for SQL NULL.
  var bytes: [UInt8]?

  static let int8: Oid = 20
  static let bytea: Oid = 17
  static let text: Oid = 25
  static let uuid: Oid = 2950
  static let int8Array: Oid = 1016
  static let byteaArray: Oid = 1001
  static let uuidArray: Oid = 2951

  static func int64(_ value: Int64) -> Parameter {
    var bytes: [UInt8] = []
    bytes.appendBigEndian(value)
    return Parameter(type: int8, bytes: bytes)
  }

  static func uint64(_ value: UInt64) -> Parameter { int64(Int64(bitPattern: value)) }
  static func bytes(_ value: [UInt8]) -> Parameter { Parameter(type: bytea, bytes: value) }
  static func text(_ value: String) -> Parameter { Parameter(type: text, bytes: Array(value.utf8)) }
  static func id(_ value: ItemID) -> Parameter { Parameter(type: uuid, bytes: value.bytes) }

  /// A one-dimensional array in the binary format: dimensions, then each
  /// element as a length (-1 for NULL) and its bytes.
  static func array(of elementType: Oid, arrayType: Oid, _ elements: [[UInt8]?]) -> Parameter {
    var out: [UInt8] = []
    out.appendBigEndian(Int32(elements.isEmpty ? 0 : 1))
    out.appendBigEndian(Int32(elements.contains { $0 == nil } ? 1 : 0))
    out.appendBigEndian(elementType)
    if !elements.isEmpty {
      out.appendBigEndian(Int32(elements.count))
      out.appendBigEndian(Int32(1))
    }
    for element in elements {
      if let element {
        out.appendBigEndian(Int32(element.count))
        out.append(contentsOf: element)
      } else {
        out.appendBigEndian(Int32(-1))
      }
    }
    return Parameter(type: arrayType, bytes: out)
  }

  static func int64s(_ values: [UInt64]) -> Parameter {
    array(
      of: int8, arrayType: int8Array,
      values.map { value in
        var bytes: [UInt8] = []
        bytes.appendBigEndian(value)
        return bytes
      })
  }

  static func byteas(_ values: [[UInt8]]) -> Parameter { array(of: bytea, arrayType: byteaArray, values) }
  static func uuids(_ values: [ItemID?]) -> Parameter {
    array(of: uuid, arrayType: uuidArray, values.map { $0?.bytes })
  }
}
