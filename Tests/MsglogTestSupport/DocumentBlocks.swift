import Foundation

/// The fenced blocks of a document that carry a marker in their info
/// string (```` ```sql recipe:owner ````), in the order they appear: what a
/// test runs as the document writes it, so that the two cannot drift.
public struct DocumentBlock: Equatable, CustomStringConvertible {
  /// The language word of the info string (`sql`, `sh`, `ini`).
  public var language: String
  /// What follows the marker's colon (`owner`, `superuser@team`).
  public var label: String
  /// The block's lines, each ending in a newline.
  public var text: String

  public var description: String { "```\(language) …:\(label)\n\(text)```" }

  /// The blocks of `file` (a path under the repository) marked `marker:`.
  public static func marked(_ marker: String, in file: String) -> [DocumentBlock] {
    let path = repositoryRoot + "/" + file
    let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    var blocks: [DocumentBlock] = []
    /// Inside a fence: the block when it is marked, nil when it is another.
    var fence: DocumentBlock?? = nil
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      switch fence {
      case .some(let block) where line == "```":
        if let block { blocks.append(block) }
        fence = nil
      case .some(.some(var block)):
        block.text += line + "\n"
        fence = .some(block)
      case .some(.none):
        continue
      case .none where line.hasPrefix("```"):
        let words = line.dropFirst(3).split(separator: " ")
        let word = words.first { $0.hasPrefix(marker + ":") }
        fence = .some(
          word.map {
            DocumentBlock(language: String(words.first!), label: String($0.dropFirst(marker.count + 1)), text: "")
          })
      case .none:
        continue
      }
    }
    return blocks
  }
}
