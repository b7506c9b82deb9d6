import Foundation

/// The files of `directory` whose bytes hold `text` anywhere, by name,
/// sorted: how a test proves a text gone — read from the files themselves,
/// free pages and all, not through msglog.
public func filesHolding(_ text: String, in directory: String) -> [String] {
  let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
  return files.sorted().filter { name in
    FileManager.default.contents(atPath: directory + "/" + name)?.range(of: Data(text.utf8)) != nil
  }
}
