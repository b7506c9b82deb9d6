import Testing

@testable import MsglogCore

/// The moves of a diff (`StreamDiff`) are the items outside a longest
/// increasing subsequence of their old positions; the diff itself, applied
/// to lists a log made, is tested with the library (`StreamDiffTests`).
@Suite struct LongestIncreasingSubsequenceTests {
  @Test func longestIncreasingSubsequenceOnKnownCases() {
    let cases: [([Int], Int)] = [
      ([], 0), ([5], 1), ([3, 1, 2], 2), ([0, 1, 2, 3], 4), ([3, 2, 1, 0], 1), ([2, 0, 3, 1, 4], 3),
    ]
    for (values, length) in cases {
      let member = StreamDiff.longestIncreasingSubsequence(values)
      let chosen = values.indices.filter { member[$0] }.map { values[$0] }
      #expect(chosen.count == length, "\(values)")
      #expect(chosen == chosen.sorted() && Set(chosen).count == chosen.count, "\(values)")
    }
  }
}
