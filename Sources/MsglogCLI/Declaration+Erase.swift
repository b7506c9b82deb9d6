/// `erase` (docs/REFERENCE.md, "Forgetting on purpose"), declared once like
/// every other command (Declaration.swift).
extension Options {
  static let eraseSender = OptionDeclaration(
    name: "sender", value: "NAME",
    help:
      "erase every item whose insert names NAME (in the stream --stream or MSGLOG_STREAM names, else in every stream)"
  )
  /// `--stream` as erase reads it: the IDs' stream as for any write, but
  /// with --sender every stream unless one is named.
  static let eraseStream = OptionDeclaration(
    name: "stream", value: "NAME",
    help: "the IDs' stream (default: $MSGLOG_STREAM, else main); with --sender, every stream unless named",
    completion: .streams)
  static let alsoPurge = OptionDeclaration(
    name: "purge", help: "then purge: scrub the erased texts from the database's files (as 'msglog purge')")
}

extension CommandDeclaration {
  static let erase = CommandDeclaration(
    name: .erase, summary: "erase items for everyone: their text gone from every event",
    overview: """
      Erase each item ID names, live or removed (ID as for remove, or a unique prefix among \
      all the stream's items), or with --sender NAME every item whose insert names NAME, and \
      NAME taken off the edits NAME made of others' items (an unsign event each; the edit keeps \
      its text). A live item leaves the list as by remove; from then on the item's text and sender are gone \
      from its insert and every edit, everywhere they are read (log, export, replay --at, \
      diff, follow): the events keep their slots and every order is as before. An erased item \
      never comes back: restore, edit and undo refuse it. Prints 'erased N items (M events) at \
      seq S'; an item erased already changes nothing. The old bytes may stay in the database's \
      free pages until 'msglog purge'.
      """,
    arguments: [
      ArgumentDeclaration(
        name: "ID", help: "a UUID, or a unique prefix of 8 or more characters", optional: true, repeating: true)
    ],
    options: [Options.eraseSender, Options.alsoPurge], shared: [Options.db, Options.eraseStream, Options.json],
    example: "msglog erase 3f2a1b4c\nmsglog erase --sender mallory --purge")

  static let purge = CommandDeclaration(
    name: .purge, summary: "scrub erased texts from the database's files",
    overview: """
      Scrub what erase left in the database's files, while other processes (serve, \
      followers, writers) go on using it. On LMDB every free page, and the unused middle of every \
      page in use, is zeroed in place, so that no file of the directory holds an erased text; on \
      PostgreSQL msglog's tables are rewritten (VACUUM FULL) and a CHECKPOINT is asked for, \
      once no transaction older than the purge is left that could still see the erased rows \
      (it waits about ten seconds at most, saying on stderr for what, then names it and fails) \
      and no session keeps a lock on its tables (tried for about ten seconds, then named). \
      Prints 'purged: N bytes scrubbed'. It cannot reach copies made before (backups, \
      exports, replicas that have not synced, PostgreSQL's WAL); a process that keeps \
      writing (serve) opens the database afresh at its next write, so that LMDB's page \
      buffers carry nothing back; see docs/REFERENCE.md.
      """,
    shared: [Options.db, Options.json], example: "msglog purge")
}
