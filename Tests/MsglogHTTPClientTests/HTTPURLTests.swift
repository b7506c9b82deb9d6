import MsglogHTTPClient
import Testing

/// URLs as `clone URL` takes them: checked whole before any connection.
@Suite struct HTTPURLTests {
  @Test func namesAddressesPortsPathsAndQueries() throws {
    var url = try HTTPURL("http://Example.COM")
    #expect(url.scheme == .http && url.host == .name("example.com") && url.port == 80 && url.path == "/")
    #expect(url.query == nil && url.origin == "example.com:80" && url.description == "http://example.com")
    url = try HTTPURL("HTTPS://log.example.com:8443/msglog/?x=1#top")
    #expect(url.scheme == .https && url.port == 8443 && url.path == "/msglog/" && url.query == "x=1")
    #expect(url.description == "https://log.example.com:8443/msglog/?x=1")
    url = try HTTPURL("https://example.com/")
    #expect(url.port == 443 && url.origin == "example.com:443")
    url = try HTTPURL("http://127.0.0.1:8080")
    #expect(url.host == .ipv4("127.0.0.1") && url.port == 8080 && url.origin == "127.0.0.1:8080")
    url = try HTTPURL("http://[::1]:8080/a%20b")
    #expect(url.host == .ipv6("::1") && url.origin == "[::1]:8080" && url.path == "/a%20b")
    url = try HTTPURL("http://[2001:DB8::1]")
    #expect(url.host == .ipv6("2001:db8::1") && url.description == "http://[2001:db8::1]")
    url = try HTTPURL("http://host.:81")
    #expect(url.host == .name("host.") && url.port == 81)
    url = try HTTPURL("http://my_host:81")
    #expect(url.host == .name("my_host"))
    // An empty port is the default one (RFC 3986 §3.2.3).
    #expect(try HTTPURL("http://h:/").port == 80)
  }

  /// Each refusal says why, and never repeats credentials.
  @Test(arguments: [
    ("ftp://example.com", "is not an http:// or https:// URL"),
    ("example.com:8080", "is not an http:// or https:// URL"),
    ("http://", "has no host"),
    ("http://:8080", "has no host"),
    ("http://ex ample.com", "a character a host name cannot have"),
    ("http://exämple.com", "must be punycode"),
    ("http://a..b", "malformed host name"),
    ("http://-a.com", "malformed host name"),
    ("http://999.1.1.1", "malformed IPv4 address"),
    ("http://127.1", "malformed IPv4 address"),
    ("http://[::1", "without its ']'"),
    ("http://[::g]", "malformed IPv6 address"),
    ("http://[fe80::1%25eth0]", "IPv6 zone"),
    ("http://[::1]x", "not a port"),
    ("http://h:0", "port that is not a number from 1 to 65535"),
    ("http://h:65536", "port that is not a number"),
    ("http://h:8o", "port that is not a number"),
    ("http://h/a b", "path that must be percent-encoded"),
    ("http://h/a%2", "path that must be percent-encoded"),
    ("http://h/a%zz", "path that must be percent-encoded"),
    ("http://h/?q=\"", "query that must be percent-encoded"),
  ])
  func refusals(_ text: String, _ reason: String) {
    #expect {
      try HTTPURL(text)
    } throws: { error in
      guard case .invalidURL(let message) = error as? HTTPClientError else { return false }
      return message.contains(reason) && message.hasPrefix("the URL ")
    }
  }

  @Test func credentialsAreRefusedWithoutBeingRepeated() {
    for text in ["https://ann:s3cret@example.com/x", "http://s3cret@example.com", "http://a:b@c@example.com:1/"] {
      do {
        _ = try HTTPURL(text)
        Issue.record("\(text) was accepted")
      } catch let error as HTTPClientError {
        #expect(!error.description.contains("s3cret") && !error.description.contains(":b@"), "\(error)")
        #expect(error.description.contains("holds credentials"), "\(error)")
      } catch {
        Issue.record("\(error)")
      }
    }
    #expect(HTTPURL.redacting("https://ann:s3cret@example.com/x@y") == "https://example.com/x@y")
    #expect(HTTPURL.redacting("http://a:b@c@example.com:1/") == "http://example.com:1/")
    #expect(HTTPURL.redacting("http://example.com/p?u=a@b") == "http://example.com/p?u=a@b")
    #expect(HTTPURL.redacting("not a url") == "not a url")
  }
}
