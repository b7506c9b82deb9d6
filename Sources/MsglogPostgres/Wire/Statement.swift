/// One statement and its parameters, for a pipeline.
struct Statement {
  var sql: String
  var parameters: [Parameter]

  init(_ sql: String, _ parameters: [Parameter] = []) {
    self.sql = sql
    self.parameters = parameters
  }
}
