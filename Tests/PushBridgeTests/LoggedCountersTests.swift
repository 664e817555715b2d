@testable import PushBridgeStore
import Testing

/// The badge log's counters by user row id (an array for small ids, a dictionary for others)
/// answer as a dictionary does, whatever the ids.
@Suite("Logged counters")
struct LoggedCountersTests {
    @Test("every id reads back its latest counter; the fold sees every id once, in order")
    func answersAsADictionary() {
        var counters = LoggedCounters()
        var model: [Int64: Int] = [:]
        var generator = SystemRandomNumberGenerator()
        // Dense ids from 1, ids far beyond (a dictionary first, moved into the array as it grows),
        // negative ids, and the same ids again.
        let ids: [Int64] = Array(1...3_000) + [70_000, 1_000_000_000_000, -5, Int64.max, 0, 65_535, 65_536]
            + (0..<20_000).map { _ in Int64.random(in: 0..<300_000, using: &generator) } + Array(1...3_000)
        for (n, id) in ids.enumerated() {
            counters.set(n, for: id)
            model[id] = n
        }
        for id in Set(ids).union([2_999_999, -1, 3_001, Int64.min]) { #expect(counters[id] == model[id], "id \(id)") }
        #expect(counters.sorted().map(\.key) == model.keys.sorted())
        #expect(counters.sorted().map(\.counter) == model.sorted { $0.key < $1.key }.map(\.value))
    }
}
