import Testing

@testable import MsglogCore

/// The declaration of the writes (`WriteOperation`) is what the decoder
/// reads: every operation's declared members make its command and no other
/// member is let through, and a door with members of its own (as a
/// replica's pushed change will have) reads them itself, beside the decoder.
@Suite struct WriteDeclarationTests {
  static let id = "3f2a1b4c-0000-4000-8000-00000000abcd"

  /// A valid value for a declared member.
  static func value(_ field: WriteOperation.Field) -> WriteMembers.Value {
    switch field.value {
    case .text: .string("x")
    case .sender: .string("ann")
    case .uuid, .selector: .string(id)
    case .number: .number(0)
    }
  }

  static func members(_ operation: WriteOperation, leavingOut left: WriteMember? = nil) -> WriteMembers {
    var members = WriteMembers()
    for field in operation.declaration.fields where field.member != left { members.set(field.member, value(field)) }
    return members
  }

  static func refusal(_ body: () throws(MsglogError) -> Write) -> String? {
    do {
      _ = try body()
      return nil
    } catch {
      return error.description
    }
  }

  @Test(arguments: WriteOperation.allCases)
  func theDeclaredMembersMakeTheCommandAndNoOtherIsTaken(_ operation: WriteOperation) throws {
    var all = Self.members(operation)
    let write = try Write(decoding: &all, operation: operation, door: .command, defaultStream: "main")
    #expect(write.request.command.operation == operation)
    #expect(write.request.stream == "main" && write.expectVersion == nil && !write.rebase)
    // Each required member, left out, is named.
    for field in operation.declaration.fields where field.required {
      var members = Self.members(operation, leavingOut: field.member)
      let words = Self.refusal { () throws(MsglogError) in
        try Write(decoding: &members, operation: operation, door: .command, defaultStream: "main")
      }
      #expect(words == "\(operation.withArticle) needs \"\(field.member.name)\"", "\(operation.name)")
    }
    // Any member neither the operation nor the door reads is refused.
    let reads = WriteMemberSet(operation.declaration.fields.map(\.member))
    for member in WriteMember.allCases where !reads.contains(member) {
      if [.stream, .expectVersion].contains(member) || (member == .rebase && operation.rebases) { continue }
      var members = Self.members(operation)
      members.set(member, member == .rebase ? .bool(true) : .number(1))
      let words = Self.refusal { () throws(MsglogError) in
        try Write(decoding: &members, operation: operation, door: .command, defaultStream: "main")
      }
      let known = WriteDoor.command.vocabulary.contains(member)
      #expect(
        words == (known ? "\(operation.withArticle) takes no \"\(member.name)\"" : "unknown member \"\(member.name)\""),
        "\(operation.name) with \(member.name)")
    }
  }

  /// Which operations `rebase` goes with is one answer for every door:
  /// the decoder's and the batch's.
  @Test(arguments: WriteOperation.allCases) func rebaseGoesWithTheOperationsThatRebase(_ operation: WriteOperation) {
    var members = Self.members(operation)
    members.set(.expectVersion, .number(3))
    members.set(.rebase, .bool(true))
    let decoded = Self.refusal { () throws(MsglogError) in
      try Write(decoding: &members, operation: operation, door: .command, defaultStream: "main")
    }
    #expect((decoded == nil) == operation.rebases, "\(operation.name): \(decoded ?? "taken")")
    var plain = Self.members(operation)
    let request = try! Write(decoding: &plain, operation: operation, door: .command, defaultStream: "main").request
    let batched = Result { () throws(MsglogError) in try WriteBatch([request], expectVersion: 3, rebase: true) }
    if case .failure(let error) = batched {
      #expect(!operation.rebases && error.description == decoded, "\(operation.name)")
    } else {
      #expect(operation.rebases, "\(operation.name)")
    }
  }

  /// A door of its own — here, changes pushed with an origin the door
  /// reads — decodes with the same decoder: it leaves its member out of
  /// the ones decoded, and reads it from the object itself.
  @Test func aDoorReadsItsOwnMembersBesideTheDecoder() throws {
    let door = WriteDoor(operations: WriteOperation.allCases, envelope: [.op, .versions, .time])
    let object = try JSONParser.parse(
      #"{"op":"insert","index":0,"text":"x","origin":{"replica":"r1","change":4},"expectVersion":2,"rebase":true}"#)
    guard case .object(let pairs) = object else {
      Issue.record("not an object: \(object)")
      return
    }
    var members = try WriteMembers(object: pairs, skipping: ["origin"])
    let write = try Write(decoding: &members, door: door, defaultStream: "main")
    #expect(write.request.command == .insert(InsertRequest(index: 0, text: "x")))
    #expect(write.expectVersion == 2 && write.rebase)
    #expect(pairs.first { $0.0 == "origin" }?.1 == .object([("replica", .string("r1")), ("change", .number("4"))]))
    // Not skipped, it is a member no write has.
    #expect(throws: MsglogError.invalidInput(.write("unknown member \"origin\""))) {
      _ = try WriteMembers(object: pairs)
    }
  }
}
