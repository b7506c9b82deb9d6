import MsglogCLI

/// The web page at `/`: plain HTML, CSS and JavaScript files in `Page/`,
/// embedded in the binary with SwiftPM resources (nothing is read from the
/// file system or fetched from the network). Every message is put into the
/// page with `textContent`, never as HTML, so a message is always shown as
/// the text it is.
enum Page {
  static var html: Response {
    file(PackageResources.index_html, "text/html; charset=utf-8")
      .with(header: "Content-Security-Policy", "default-src 'self'; style-src 'self'; script-src 'self'")
  }
  static var script: Response { file(PackageResources.app_js, "text/javascript; charset=utf-8") }
  static var style: Response { file(PackageResources.app_css, "text/css; charset=utf-8") }
  static var icon: Response { file(PackageResources.favicon_svg, "image/svg+xml") }

  private static func file(_ bytes: [UInt8], _ type: String) -> Response {
    Response(status: 200, contentType: type, body: .bytes(bytes))
  }
}
