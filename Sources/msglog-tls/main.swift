import MsglogHTTPClient

#if canImport(Glibc)
  import Glibc
#endif

/// msglog-tls: https:// for the static `msglog`, which cannot run GnuTLS
/// itself. The HTTP client runs it from beside msglog, one process per
/// connection, as `msglog-tls relay URL CONNECT_TIMEOUT [CAFILE]` (see
/// TLSRelay); it is not meant to be run by hand.
exit(TLSRelay.run(CommandLine.arguments))
