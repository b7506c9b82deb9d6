import Testing

@testable import MsglogCLI

/// The options the parser knows before it knows the command (`Options.every`,
/// listed so that no process builds the whole command table to parse its
/// first option) are the options the command table declares.
@Suite struct DeclarationTests {
  @Test func theParsersOptionsAreTheTablesOptions() {
    let names = Options.every.map(\.name)
    #expect(Set(names).count == names.count, "Options.every lists a name twice")
    let listed = Dictionary(Options.every.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    let declared = Dictionary(uniqueKeysWithValues: CommandDeclaration.everyOption.map { ($0.name, $0) })
    #expect(Set(listed.keys) == Set(declared.keys), "Options.every and the command table name different options")
    for (name, option) in declared {
      #expect(listed[name] == option, "--\(name) is not declared in Options.every as the command table declares it")
    }
  }
}
