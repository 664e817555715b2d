import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeRecordCoding
@testable import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The badge log's rows: varint entries since 0.17, 16-byte entries before; both read back exactly,
/// and bytes PushBridge did not write are named, not guessed at.
@Suite("Badge log rows")
struct BadgeLogTests {
    static func entries(_ blob: [UInt8]) throws -> [(Int64, Int)] {
        var out: [(Int64, Int)] = []
        let count = try blob.withUnsafeBytes { try BadgeLogEntries.read($0) { out.append(($0, $1)) } }
        #expect(count == out.count)
        return out
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test("varint rows read back every entry: ids up, down, far apart and at the extremes, any counter")
    func varintRowsReadBack() throws {
        var generator = SystemRandomNumberGenerator()
        let cases: [[(Int64, Int)]] = [
            [],
            [(1, 0)],
            (1...77_000).map { (Int64($0), $0 % 9) },  // a group send: in order, small counters
            (1...500).reversed().map { (Int64($0) * 1_000_003, Int.max - $0) },
            [(Int64.max, Int.min), (1, -1), (Int64.max, 0), (Int64.min, 63), (0, 64), (-1, -64), (5, 1 << 40)],
            (0..<2_000).map { _ in (Int64.random(in: 1...Int64.max, using: &generator), Int.random(in: Int.min...Int.max, using: &generator)) },
        ]
        for entries in cases {
            let blob = BadgeLogEntries.write(entries.map { (UserKey(rawValue: $0.0), $0.1) })
            #expect(blob.count % 16 == 0)
            let read = try Self.entries(blob)
            #expect(read.map(\.0) == entries.map(\.0) && read.map(\.1) == entries.map(\.1), "\(entries.count) entries")
        }
        // In order with small counters an entry takes 2 bytes, not 16.
        #expect(BadgeLogEntries.write((1...77_000).map { (UserKey(rawValue: Int64($0)), 5) }).count <= 16 + 77_000 * 2 + 15)
    }

    /// The entries of the golden rows: ids up, down, far apart and at the extremes, any counter.
    static let goldenEntries: [(Int64, Int)] = [(1, 0), (2, 5), (3, 9), (1_000_003, 300), (7, -1), (Int64.max, Int.min), (Int64.min, Int.max), (0, 64), (-1, -64)]

    /// The two formats in golden files (`Tests/Data/records/badge-log-*`): the varint row written today
    /// comes out byte for byte, and both golden rows read back into the same entries
    /// (`PUSHBRIDGE_RECORD_GOLDEN=1` writes them anew).
    @Test("golden rows: the varint format (since 0.17) written and read, the 16-byte format (0.10–0.16) read")
    func goldenRows() throws {
        let varint = BadgeLogEntries.write(Self.goldenEntries.map { (UserKey(rawValue: $0.0), $0.1) })
        try GoldenFile.check(GoldenFile.hex(varint), against: "records/badge-log-varint.hex")
        let sixteen = Self.goldenEntries.flatMap { entry in
            withUnsafeBytes(of: entry.0.littleEndian, Array.init) + withUnsafeBytes(of: Int64(entry.1).littleEndian, Array.init)
        }
        try GoldenFile.check(GoldenFile.hex(sixteen), against: "records/badge-log-16-byte.hex")
        let expected = Self.goldenEntries.map { "\($0.0) \($0.1)" }.joined(separator: "\n") + "\n"
        try GoldenFile.check(expected, against: "records/badge-log.entries")
        for name in ["badge-log-varint.hex", "badge-log-16-byte.hex"] {
            let golden = GoldenFile.bytes(fromHex: try #require(GoldenFile.read("records/\(name)")))
            let read = try Self.entries(golden).map { "\($0.0) \($0.1)" }.joined(separator: "\n") + "\n"
            #expect(read == GoldenFile.read("records/badge-log.entries"), "\(name)")
        }
    }

    @Test("rows of the 16-byte format (0.10–0.16) are still read, before and after varint rows")
    func sixteenByteRowsAreRead() async throws {
        let path = temporaryDatabase()
        let facade = PushFacade(store: try SQLiteStateStore(path: path))
        try await facade.configure(FacadeScenario.app)
        for user in ["a", "b", "c"] { try await FacadeScenario.register(user, in: facade) }
        let ids = try sqlite(path, "SELECT id FROM users ORDER BY name").compactMap { Int64($0) }
        // a: 7 then 9 (the later row wins), b: 4, c: its stored counter.
        func old(_ entries: [(Int64, Int64)]) -> String {
            Self.hex(entries.flatMap { entry in
                withUnsafeBytes(of: entry.0.littleEndian, Array.init) + withUnsafeBytes(of: entry.1.littleEndian, Array.init)
            })
        }
        let varint = Self.hex(BadgeLogEntries.write([(UserKey(rawValue: ids[0]), 9)]))
        _ = try sqlite(path, "INSERT INTO badge_log (entries) VALUES (x'\(old([(ids[0], 7), (ids[1], 4)]))'), (x'\(varint)')")
        let store = try SQLiteStateStore(path: path)
        #expect(try store.read { try $0.user("a")?.state.badge } == 9)
        #expect(try store.read { try $0.user("b")?.state.badge } == 4)
        #expect(try store.read { try $0.user("c")?.state.badge } == 0)
        try store.foldBadgeLog()
        #expect(try sqlite(path, "SELECT badge FROM badge_counters ORDER BY user_id") == ["9", "4", "0"])
    }

    @Test("a damaged row is named (table, column, what is wrong), whatever the damage")
    func damagedRowsAreNamed() async throws {
        let good = BadgeLogEntries.write([(UserKey(rawValue: 3), 1), (UserKey(rawValue: 4), 300)])
        var tooMany = good
        tooMany[8] = 200  // more entries than the bytes can hold
        var runsOver = Array(good.prefix(16)) + [0x81, 0x81, 0x81, 0x81] + [UInt8](repeating: 0x80, count: 12)  // a varint without its last byte
        runsOver[8] = 1
        var trailing = good
        trailing[trailing.count - 1] = 7  // not zeros after the last entry
        let tooLong = Array(good.prefix(16)) + [UInt8](repeating: 0xFF, count: 16)  // a varint past 64 bits
        for (blob, what) in [(Array(good.prefix(20)), "not a multiple of 16"), (tooMany, "200 entries"), (runsOver, "runs past its end"),
            (trailing, "bytes after the last entry"), (tooLong, "runs past its end")] {
            let error = try #require(throws: StoreError.self, "\(what)") { try Self.entries(blob) }
            #expect(error.description.contains("badge_log.entries") && error.description.contains(what), "\(error)")
        }
        // Through a store: the read fails with the same error and nothing is changed.
        let path = temporaryDatabase()
        let facade = PushFacade(store: try SQLiteStateStore(path: path))
        try await facade.configure(FacadeScenario.app)
        try await FacadeScenario.register("a", in: facade)
        _ = try sqlite(path, "INSERT INTO badge_log (entries) VALUES (x'\(Self.hex(trailing))')")
        let error = try #require(throws: StoreError.self) { try SQLiteStateStore(path: path).read { try $0.user("a") } }
        #expect(error.description.contains("badge_log.entries"))
        #expect(try sqlite(path, "SELECT count(*) FROM badge_log") == ["1"])
    }

    @Test("a group send's counters are one varint row, ≈ 2 bytes a counter")
    func groupSendsWriteVarints() async throws {
        let (path, _, facade) = try await ReceiverCacheTests.populated(members: 300)
        _ = try await facade.send(FacadeScenario.groupMessage(from: "m1", to: ReceiverCacheTests.group, id: "v1"), dialect: "agora-silent", now: FacadeScenario.now)
        let rows = try sqlite(path, "SELECT length(entries) FROM badge_log")
        #expect(rows.count == 1)
        let pushed = try sqlite(path, "SELECT count(*) FROM devices").first.flatMap { Int($0) } ?? 0
        #expect((Int(rows[0]) ?? .max) <= 16 + pushed * 3 + 15, "\(rows) for \(pushed) devices")
    }
}
