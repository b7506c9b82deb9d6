/// The web page at `/`: plain HTML, CSS and JavaScript (Resources/), embedded
/// in the binary by SwiftPM (nothing is read from the file system or fetched
/// from the network) and served as bytes computed once, each with an `ETag`
/// so that a browser revalidates (`If-None-Match` → 304) instead of fetching
/// again. Every message is put into the page with `textContent`, never as
/// HTML, so a message is always shown as the text it is.
enum Page {
  /// One of the page's files, ready to send.
  struct File: Sendable {
    let path: String
    let contentType: String
    let bytes: [UInt8]
    let etag: String
    var headers: [(String, String)] = []

    /// `version`: what the ETag stands for (by default the file's own bytes).
    init(_ path: String, _ bytes: [UInt8], headers: [(String, String)] = [], version: [UInt8]? = nil) {
      self.path = path
      self.contentType = Self.contentType(of: path)
      self.bytes = bytes
      self.headers = headers
      etag = "\"" + String(Self.fingerprint(version ?? bytes), radix: 16) + "\""
    }

    /// By the name's extension; `/` is the page itself.
    static func contentType(of path: String) -> String {
      switch path.split(separator: ".").last {
      case "js": "text/javascript; charset=utf-8"
      case "css": "text/css; charset=utf-8"
      case "svg": "image/svg+xml"
      default: "text/html; charset=utf-8"
      }
    }

    /// FNV-1a: the ETag changes whenever the file does.
    static func fingerprint(_ bytes: [UInt8]) -> UInt64 {
      var hash: UInt64 = 0xcbf2_9ce4_8422_2325
      for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
      return hash
    }

    /// The file, or 304 when the browser holds this version already.
    func response(to request: Request) -> Response {
      let headers = self.headers + [("ETag", etag), ("Cache-Control", "no-cache")]
      if let tags = request.header("if-none-match"), Self.matches(tags, etag) {
        return Response(status: 304, contentType: contentType, body: .bytes([]), headers: headers)
      }
      return Response(contentType: contentType, body: .bytes(bytes), headers: headers)
    }

    /// `If-None-Match: "a", W/"b"` or `*` (weak comparison, RFC 9110 13.1.2).
    static func matches(_ header: String, _ etag: String) -> Bool {
      header.split(separator: ",").contains { tag in
        let tag = tag.trimmingCharacters(in: " \t")
        return tag == "*" || tag == etag || tag == "W/" + etag
      }
    }
  }

  /// The page's files, each at its path.
  static var files: [File] { [html] + assets }

  /// The page itself. It names every module in a `Link: rel=modulepreload`
  /// header, so that the browser asks for all of them at once instead of
  /// one level of imports after another (each a round trip, revalidated).
  /// Its ETag is the version of every file of the page: the service worker
  /// keeps the files of the version it holds and, when a page opens with
  /// that version, takes them from there instead of asking for each again.
  static let html = File(
    "/", PackageResources.index_html,
    headers: [
      // Only its own scripts and style; and no other page may frame it (a
      // foreign page could overlay it and have the user drag or delete).
      ("Content-Security-Policy",
       "default-src 'self'; style-src 'self'; script-src 'self'; worker-src 'self'; frame-ancestors 'none'"),
      ("X-Frame-Options", "DENY"),
      ("Link", preloads),
    ],
    version: everyFile)

  /// Every file's path and bytes, one after the other: what the page's ETag stands for.
  static var everyFile: [UInt8] {
    assets.reduce(into: PackageResources.index_html) { all, file in all += [0] + Array(file.path.utf8) + [0] + file.bytes }
  }

  /// `</app.js>; rel=modulepreload, …`: every module (the service worker
  /// is a script of its own, not one of the page's modules).
  static var preloads: String {
    assets.filter { $0.path.hasSuffix(".js") && $0.path != serviceWorker.path }.map { "<\($0.path)>; rel=modulepreload" }.joined(separator: ", ")
  }

  /// What the page loads, each at its path: adding a file to Resources/
  /// (which Package.swift embeds whole) is adding its line here. The
  /// scripts are ES modules: index.html loads app.js, which imports the rest
  /// and puts the page together.
  static let assets = [
    File("/app.css", PackageResources.app_css),
    File("/favicon.svg", PackageResources.favicon_svg),
    File("/app.js", PackageResources.app_js),
    File("/api.js", PackageResources.api_js),
    File("/board.js", PackageResources.board_js),
    File("/board-keyboard.js", PackageResources.board_keyboard_js),
    File("/board-pointer.js", PackageResources.board_pointer_js),
    File("/chat.js", PackageResources.chat_js),
    File("/compose.js", PackageResources.compose_js),
    File("/dom.js", PackageResources.dom_js),
    File("/follow.js", PackageResources.follow_js),
    File("/frame.js", PackageResources.frame_js),
    File("/history.js", PackageResources.history_js),
    File("/listview.js", PackageResources.listview_js),
    File("/model.js", PackageResources.model_js),
    File("/say.js", PackageResources.say_js),
    File("/screen.js", PackageResources.screen_js),
    File("/shown.js", PackageResources.shown_js),
    File("/storage.js", PackageResources.storage_js),
    File("/stream.js", PackageResources.stream_js),
    File("/token.js", PackageResources.token_js),
    File("/signed-in.js", PackageResources.signed_in_js),
    File("/undo.js", PackageResources.undo_js),
    File("/words.js", PackageResources.words_js),
    File("/writes.js", PackageResources.writes_js),
    File("/outbox.js", PackageResources.outbox_js),
    File("/sync.js", PackageResources.sync_js),
    File("/idb.js", PackageResources.idb_js),
    File("/fingerprint.js", PackageResources.fingerprint_js),
    File("/held.js", PackageResources.held_js),
    File("/events.js", PackageResources.events_js),
    File("/kept.js", PackageResources.kept_js),
    File("/erase.js", PackageResources.erase_js),
    File("/forget.js", PackageResources.forget_js),
    File("/seal.js", PackageResources.seal_js),
    serviceWorker,
  ]

  /// The service worker, at the root so that its scope is the whole page.
  /// Its own policy: it fetches the page's files from this origin (the
  /// default policy, `default-src 'none'`, would stop it).
  static let serviceWorker = File(
    "/service-worker.js", PackageResources.service_worker_js,
    headers: [("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'")])

  /// The page's routes: no token (a browser cannot send one with a
  /// navigation, and they hold no data).
  static var routes: [Route] {
    files.map { file in
      Route(
        .get, file.path, needsToken: false,
        success: .init(200, file.contentType, .text, "the page's \(file.path)"), refusals: [304]
      ) { file.response(to: $0) }
    }
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in set: String) -> Substring {
    var text = self
    while let first = text.first, set.contains(first) { text.removeFirst() }
    while let last = text.last, set.contains(last) { text.removeLast() }
    return text
  }
}
