import Foundation
import MsglogTestSupport
import Testing

/// The web page in headless Chromium (Selenium), against real `msglog
/// serve` processes: Tests/Browser/board.py (two windows, drags, reload, the
/// history slider, two conflicting drags that both land, a delete, the chat,
/// `<script>` as text) and Tests/Browser/page.py, one case per item of the
/// page's issues (phone and touch, keyboard and axe-core, the past,
/// following, sending, reconnecting, the token, the look, 10,000 items;
/// editing a message, undo and redo, a deleted card back from its note;
/// offline changes kept for the log and the token they were made with),
/// and every file of the page served as it is.
///
/// One browser case at a time: each starts Chromium, and several at once on
/// a small machine would only make each slower.
@Suite(.serialized) struct BrowserTests {
  @Test func theBoardInTwoBrowserWindows() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let screenshot = s.dir + "/board.png"
    let output = s.dir + "/browser.txt"
    let board = repositoryRoot + "/Tests/Browser/board.py"
    let status = shell("/usr/bin/python3 '\(board)' '\(server.url!)/' '\(screenshot)' '\(s.dir)' > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(text)")
    print(text.split(separator: "\n").first { $0.hasPrefix("drag shown") } ?? "")
    #expect(FileManager.default.fileExists(atPath: screenshot))
  }

  /// The page at its public origin behind docs/SERVER.md's nginx, which
  /// ends TLS (Tests/Browser/proxy.py): its message is written and no
  /// longer pending (issue 35.1; without `--public-origin` every write
  /// from it was refused as another origin's).
  @Test func thePageWritesThroughTheDocumentedProxy() throws {
    let s = Sandbox()
    let proxy = try DocumentedProxy(s)
    defer { #expect(proxy.stop().code == 0) }
    let output = s.dir + "/proxy.txt"
    let status = shell(
      "/usr/bin/python3 '\(repositoryRoot)/Tests/Browser/proxy.py' --origin '\(proxy.origin)' "
        + "--serve '\(proxy.server.url!)' --certificate '\(proxy.certificate)' --dir '\(s.dir)' > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(text)")
  }

  /// page.py's cases, each its own test.
  static let pageCases = [
    "views-show-their-own-items",
    "phone-scrolls-and-moves-one-card",
    "a-card-moves-without-dragging",
    "keyboard-moves-a-card-and-says-so",
    "a-card-added-to-a-long-board-is-shown-and-said",
    "what-others-write-is-said",
    "a-phone-gets-buttons-a-finger-wide",
    "axe-finds-nothing-serious",
    "forced-colours-keep-what-colour-said",
    "the-past-is-read-only",
    "the-slider-of-a-trimmed-log-begins-where-its-history-does",
    "a-new-stream-follows-from-the-head",
    "a-card-dragged-past-the-drawn-ones-lands-where-it-shows",
    "a-live-update-keeps-the-drag",
    "text-is-isolated-wrapped-and-dated",
    "sending-appends-once",
    "a-push-whose-answer-never-comes-is-sent-again",
    "what-changes-above-the-screen-leaves-the-screen-alone",
    "reconnects-and-resynchronises",
    "the-token-from-the-fragment-or-the-page",
    "a-link-with-another-token-asks-before-it-signs-in",
    "a-named-token-signs-in-and-writes-as-its-name",
    "a-token-that-may-only-read-is-offered-no-message-box",
    "a-token-that-may-not-read-the-stream-is-told-so",
    "a-half-typed-message-outlives-another-page-in-the-tab",
    "links-with-made-up-tokens-never-lock-the-browser-out",
    "a-page-people-like",
    "ten-thousand-items-open-fast",
    "a-message-is-edited-in-place",
    "undo-and-redo-this-pages-changes",
    "a-deleted-card-comes-back-from-the-note",
    "offline-changes-land-once",
    "a-cached-page-asks-only-for-itself",
    "two-pages-offline-land-by-the-predecessor-rule",
    "a-hundred-offline-changes-sync",
    "offline-undo-restore-and-refusal",
    "two-tabs-share-one-outbox",
    "a-card-moved-just-before-a-reload-never-shows-at-its-old-place",
    "first-writes-at-once-share-one-key",
    "the-page-proves-its-replica",
    "offline-changes-stay-with-their-log",
    "what-a-token-read-stays-with-it",
  ]

  /// `MSGLOG_SCREENSHOTS=docs scripts/test --filter BrowserTests` refreshes
  /// the pictures in docs/SERVER.md (chat.png, board.png, phone.png; README shows the chat).
  @Test(arguments: pageCases) func thePage(_ name: String) throws {
    let s = Sandbox()
    let output = s.dir + "/page.txt"
    var command =
      "PYTHONPATH='\(repositoryRoot)/.build/browser-python' /usr/bin/python3 '\(repositoryRoot)/Tests/Browser/page.py' "
      + "'\(name)' --msglog '\(Sandbox.binary)' --dir '\(s.dir)'"
    if let pictures = ProcessInfo.processInfo.environment["MSGLOG_SCREENSHOTS"] {
      let directory = URL(fileURLWithPath: pictures, relativeTo: URL(fileURLWithPath: repositoryRoot))
      command += " --screenshots '\(directory.path)'"
    }
    let status = shell(command + " > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(name):\n\(text)")
    for line in text.split(separator: "\n") where !line.hasPrefix("ok") { print("\(name): \(line)") }
  }

  /// Tests/Browser/erase.py's cases (issue 38): Delete for everyone, and
  /// an erase learned by the page gone from the screen, a reload, what the
  /// page keeps and the bytes of Chromium's profile.
  static let eraseCases = [
    "an-erased-message-leaves-the-page-and-the-browser",
    "delete-for-everyone-by-keyboard-and-finger",
  ]

  @Test(arguments: eraseCases) func erasing(_ name: String) throws {
    let s = Sandbox()
    let output = s.dir + "/erase.txt"
    let command =
      "PYTHONPATH='\(repositoryRoot)/.build/browser-python' /usr/bin/python3 '\(repositoryRoot)/Tests/Browser/erase.py' "
      + "'\(name)' --msglog '\(Sandbox.binary)' --dir '\(s.dir)'"
    let status = shell(command + " > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(name):\n\(text)")
    for line in text.split(separator: "\n") where !line.hasPrefix("ok") { print("\(name): \(line)") }
  }

  @Test func everyPageCaseRuns() {
    let s = Sandbox()
    let output = s.dir + "/cases.txt"
    #expect(shell("/usr/bin/python3 '\(repositoryRoot)/Tests/Browser/page.py' --list > '\(output)'") == 0)
    let listed = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    #expect(listed == Self.pageCases)
    let erasing = s.dir + "/erase-cases.txt"
    #expect(shell("/usr/bin/python3 '\(repositoryRoot)/Tests/Browser/erase.py' --list > '\(erasing)'") == 0)
    let erase = ((try? String(contentsOfFile: erasing, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    #expect(erase == Self.eraseCases)
  }

  /// Every file in the page's folder is served at its name (index.html at
  /// `/`), byte for byte, with the type a browser takes it as (a module it
  /// cannot fetch, or gets as another type, stops the whole page), and the
  /// page names each module in its `Link: rel=modulepreload`.
  @Test func everyFileOfThePageIsServed() throws {
    let s = Sandbox()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let folder = repositoryRoot + "/Sources/MsglogServer/Page/Resources"
    let names = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
    #expect(names.contains("app.js") && names.contains("model.js"), "\(names)")
    let types = [
      "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
      "svg": "image/svg+xml",
    ]
    for name in names {
      let path = name == "index.html" ? "/" : "/" + name
      let (body, meta) = (s.dir + "/served", s.dir + "/served.meta")
      shell("curl -s -o '\(body)' -w '%{http_code} %{content_type}' '\(server.url!)\(path)' > '\(meta)'")
      let type = types[String(name.split(separator: ".").last ?? "")] ?? "?"
      #expect((try? String(contentsOfFile: meta, encoding: .utf8)) == "200 " + type, "\(path)")
      #expect(
        FileManager.default.contents(atPath: body) == FileManager.default.contents(atPath: folder + "/" + name),
        "\(path)")
    }
    // The page names every module for preloading: the browser asks for them all at once.
    let headers = s.dir + "/page.headers"
    shell("curl -s -o /dev/null -D '\(headers)' '\(server.url!)/'")
    let head = (try? String(contentsOfFile: headers, encoding: .utf8)) ?? ""
    for name in names where name.hasSuffix(".js") && name != "service-worker.js" {
      #expect(head.contains("</\(name)>; rel=modulepreload"), "\(name): \(head)")
    }
    // The service worker is no module of the page; its own policy lets it fetch the page's files, and the page's lets it run.
    #expect(!head.contains("service-worker.js"), "\(head)")
    #expect(head.contains("worker-src 'self'"), "\(head)")
    let worker = s.dir + "/worker.headers"
    shell("curl -s -o /dev/null -D '\(worker)' '\(server.url!)/service-worker.js'")
    let workerHead = (try? String(contentsOfFile: worker, encoding: .utf8)) ?? ""
    #expect(workerHead.contains("Content-Security-Policy: default-src 'self'; frame-ancestors 'none'"), "\(workerHead)")
  }

  /// Tests/Browser/attacks.py: a page on another origin, a file:// page, a
  /// rebound name and a foreign frame, in Chromium, against `msglog serve`
  /// without a token. Nothing is written, read or framed.
  @Test func foreignPagesCannotWriteReadOrFrame() throws {
    let s = Sandbox()
    s.append("private note")
    let before = s.export()
    let server = try ServedLog.running(s)
    defer { #expect(server.stop().code == 0) }
    let output = s.dir + "/attacks.txt"
    let status = shell(
      "/usr/bin/python3 '\(repositoryRoot)/Tests/Browser/attacks.py' '\(server.url!)/' > '\(output)' 2>&1")
    let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    #expect(status == 0 && text.hasSuffix("ok\n"), "\(text)")
    #expect(s.export() == before)
  }
}
