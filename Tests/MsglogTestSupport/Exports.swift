// What every test target shares comes with the support of the core's tests
// (the seeded generator), which needs nothing but the standard library.
@_exported import MsglogCoreTestSupport
