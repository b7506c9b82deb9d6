import Foundation
import MsglogTestSupport
import Testing

/// The web page in headless Chromium (Tests/Browser/board.py, Selenium),
/// against a real `msglog serve`: two windows, drags, reload, the history
/// slider, a conflicting drag, a delete, the chat, and `<script>` as text.
@Suite struct BrowserTests {
  @Test func theBoardInTwoBrowserWindows() throws {
    let s = Sandbox()
    let server = try ServeTests.Server(s)
    defer { #expect(server.stop().code == 0) }
    let screenshot = s.dir + "/board.png"
    let output = s.dir + "/browser.txt"
    let status = shell(
      "/usr/bin/python3 '\(repositoryRoot)/Tests/Browser/board.py' '\(server.url)' '\(screenshot)' > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(text)")
    print(text.split(separator: "\n").first { $0.hasPrefix("drag shown") } ?? "")
    #expect(FileManager.default.fileExists(atPath: screenshot))
    // `MSGLOG_SCREENSHOT=docs/board.png scripts/test --filter BrowserTests` refreshes README's picture.
    if let keep = ProcessInfo.processInfo.environment["MSGLOG_SCREENSHOT"] {
      try? FileManager.default.removeItem(atPath: keep)
      try FileManager.default.copyItem(atPath: screenshot, toPath: keep)
    }
  }

  /// Tests/Browser/attacks.py: a page on another origin, a file:// page, a
  /// rebound name and a foreign frame, in Chromium, against `msglog serve`
  /// without a token. Nothing is written, read or framed.
  @Test func foreignPagesCannotWriteReadOrFrame() throws {
    let s = Sandbox()
    s.append("private note")
    let before = s.export()
    let server = try ServeTests.Server(s)
    defer { #expect(server.stop().code == 0) }
    let output = s.dir + "/attacks.txt"
    let status = shell(
      "/usr/bin/python3 '\(repositoryRoot)/Tests/Browser/attacks.py' '\(server.url)' > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(text)")
    #expect(s.export() == before)
  }
}
