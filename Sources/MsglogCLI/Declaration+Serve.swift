/// The options of `serve` behind a reverse proxy (docs/SERVER.md, "Behind
/// a reverse proxy"), declared once like every other (Declaration.swift).
extension Options {
  static let publicOrigin = OptionDeclaration(
    name: "public-origin", value: "URL",
    help: "an origin people's browsers reach the page at through a proxy (https://host[:port]): "
      + "its writes are the page's own, its host is served",
    repeatable: true)
  static let trustedProxy = OptionDeclaration(
    name: "trusted-proxy", value: "ADDR",
    help: "a proxy's IP address whose X-Forwarded-For, Forwarded and X-Forwarded-Proto are believed "
      + "(the client's address for the log and the per-address limit)",
    repeatable: true)
}
