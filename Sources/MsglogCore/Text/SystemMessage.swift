#if canImport(Glibc)
  import Glibc
#endif

/// strerror's text in the lowercase of msglog's messages ("permission denied").
package func systemMessage(_ code: Int32) -> String {
  let text = String(cString: strerror(code))
  guard let first = text.first else { return text }
  return first.lowercased() + text.dropFirst()
}
