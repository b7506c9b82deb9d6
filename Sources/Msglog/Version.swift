/// This version of msglog: `msglog --version`, the manual's header, the
/// `User-Agent` a replica sends its remote.
package let msglogVersion = "0.2.0"
