import Foundation

/// Reads `output` until what was read holds `word` (true), or the writer
/// closed it first (false): another process saying it is ready — a lock
/// taken, a transaction begun.
public func readsUntil(_ word: String, from output: Pipe) -> Bool {
  var said = Data()
  while !String(decoding: said, as: UTF8.self).contains(word) {
    let chunk = output.fileHandleForReading.availableData
    if chunk.isEmpty { return false }
    said += chunk
  }
  return true
}
