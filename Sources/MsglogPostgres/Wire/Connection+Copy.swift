import CLibPQ

extension Connection {
  /// Starts `COPY … FROM STDIN (FORMAT binary)` (`sql`): its rows go
  /// through the `CopyRows` returned, streamed as they are made, until it
  /// finishes or is abandoned. Nothing else may be sent meanwhile.
  func startCopy(_ sql: String) throws(PostgresError) -> CopyRows {
    let started = PQexecParams(handle, sql, 0, nil, nil, nil, nil, 1)
    guard let started, PQresultStatus(started) == PGRES_COPY_IN else {
      let failure = error(of: started)
      if let started { PQclear(started) }
      throw failure
    }
    PQclear(started)
    return CopyRows(connection: self)
  }

  /// Sends one chunk of copy data.
  func putCopyData(_ bytes: [UInt8]) throws(PostgresError) {
    let sent = bytes.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
    }
    // -1: the copy is over (the server refused a row, or the connection is gone).
    guard sent == 1 else { throw error(of: nil) }
  }

  /// Ends the copy — done, or abandoned — and reads its results: the
  /// server's failure, if it had one (an abandoned copy's own is not one),
  /// else libpq's.
  func endCopy(abandoning: Bool) -> PostgresError? {
    var failure: PostgresError? = nil
    if PQputCopyEnd(handle, abandoning ? "msglog abandoned the copy" : nil) != 1 {
      failure = error(of: nil)
    }
    while let result = PQgetResult(handle) {
      let status = PQresultStatus(result)
      if status == PGRES_COPY_IN {
        // Still copying (the end could not be sent): abandon it, or this never ends.
        _ = PQputCopyEnd(handle, "msglog abandoned the copy")
      } else if status != PGRES_COMMAND_OK, status != PGRES_TUPLES_OK {
        let refused = error(of: result)
        // The server's own words win over libpq's "no COPY in progress".
        if !abandoning || refused.sqlState != PostgresError.queryCanceled { failure = refused }
      }
      PQclear(result)
      if isBroken { break }
    }
    return failure ?? (isBroken ? error(of: nil) : nil)
  }
}
