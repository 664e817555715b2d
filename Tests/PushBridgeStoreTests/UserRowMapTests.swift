import PushBridgeCore
@testable import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// What a connection keeps by user row id (an array for ids close together, a dictionary for
/// others) answers as a dictionary does, whatever the ids.
@Suite("User row map")
struct UserRowMapTests {
    @Test("badge log counters: every id reads back its latest counter; the fold sees every id once, in order")
    func answersAsADictionary() {
        var counters = UserRowMap()
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
        #expect(counters.sorted().map(\.value) == model.sorted { $0.key < $1.key }.map(\.value))
    }

    @Test("a kept group's positions: rows whose ids are far from 0, scattered or missing, are found at their positions")
    func positionsOfRows() {
        let keys: [Int64?] = [5_000_010, nil, 5_000_000, 9_000_000_000, 4_999_999_999, 5_000_003, nil, Int64.min]
            + (0..<5_000).map { 6_000_000 - Int64($0) * 3 }
        let rows = keys.map { key in
            StoredReceiver(key: key.map(UserKey.init(rawValue:)), state: UserState(user: "u", displayStyle: .simpleBanner, backgroundGraceSeconds: 0),
                isConfigured: true)
        }
        let positions = UserRowMap(positionsOf: rows)
        for (position, key) in keys.enumerated() {
            if let key { #expect(positions[key] == position, "key \(key)") }
        }
        for absent: Int64 in [0, 5_000_001, 5_999_999, 6_000_001, 9_000_000_001, -1] { #expect(positions[absent] == nil, "key \(absent)") }
    }
}
