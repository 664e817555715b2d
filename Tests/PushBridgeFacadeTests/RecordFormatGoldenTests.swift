import Foundation
import PushBridgeCore
@testable import PushBridgeFacade
@testable import PushBridgeRecordCoding
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The stored formats of a sent message's record, in golden files (`Tests/Data/records/`): each
/// version's bytes are read back into the decisions of its `.jsonl` file, and the formats written
/// today (`PBR3`, `PBR4` with its roll `PBL1`) come out byte for byte. A change of a format is a new
/// version that still reads these files, never an edit of them. `PUSHBRIDGE_RECORD_GOLDEN=1 swift
/// test --filter RecordFormatGoldenTests` writes them anew.
@Suite("Record formats (golden files)")
struct RecordFormatGoldenTests {
    /// Checks one format: the bytes made now against `records/NAME.hex` (when the format is written
    /// today, or was built from its description), and the golden bytes read back against `NAME.jsonl`.
    static func check(_ name: String, made: [UInt8], roll: (id: Int64, bytes: [UInt8])? = nil) throws {
        try GoldenFile.check(GoldenFile.hex(made), against: "records/\(name).hex")
        let golden = GoldenFile.isRecording ? made : GoldenFile.bytes(fromHex: try #require(GoldenFile.read("records/\(name).hex")))
        let read = try SentMessageRecord.decode(golden, messageID: name) { id in id == roll?.id ? roll?.bytes : nil }
        try GoldenFile.check(read.map { String(decoding: $0.json, as: UTF8.self) }.joined(separator: "\n") + "\n", against: "records/\(name).jsonl")
    }

    /// The reasons the golden files of 0.12–0.26 hold (later reasons have codes after them).
    static let reasonsUntil026 = Array(SuppressionReason.allCases.prefix(8))

    @Test("PBR3 (since 0.12): every shape of decision, written and read")
    func version3() throws {
        try Self.check("pbr3-every-shape", made: SentMessageRecord.encode(RepeatRecordTests.everyShape(reasons: Self.reasonsUntil026)))
    }

    @Test("PBR3 and PBR4 with the reasons of 0.27 (command, large-group): new codes after the old ones")
    func reasonsOf027() throws {
        let added = Array(SuppressionReason.allCases.dropFirst(8))
        #expect(added == [.command, .largeGroup])
        try Self.check("pbr3-reasons-0.27", made: SentMessageRecord.encode(RepeatRecordTests.everyShape(reasons: added)))
        let decisions = RepeatRecordTests.everyShape(reasons: added)
        let rows = RepeatRecordTests.roll(for: decisions, skipped: 5)
        try Self.check(
            "pbr4-reasons-0.27", made: SentMessageRecord.encode(decisions, roll: .init(id: 301, rows: rows, skipped: 5)),
            roll: (301, SentMessageRecord.encodeRoll(rows)))
    }

    @Test("PBR4 (since 0.14) and its roll PBL1: every shape of decision against a kept group's rows")
    func version4() throws {
        let decisions = RepeatRecordTests.everyShape(reasons: Self.reasonsUntil026)
        let rows = RepeatRecordTests.roll(for: decisions, skipped: 5)
        let roll = SentMessageRecord.encodeRoll(rows)
        try GoldenFile.check(GoldenFile.hex(roll), against: "records/pbl1-every-shape.hex")
        let goldenRoll = GoldenFile.isRecording ? roll : GoldenFile.bytes(fromHex: try #require(GoldenFile.read("records/pbl1-every-shape.hex")))
        try Self.check("pbr4-every-shape", made: SentMessageRecord.encode(decisions, roll: .init(id: 300, rows: rows, skipped: 5)), roll: (300, goldenRoll))
    }

    @Test("PBR2 (0.10–0.11), built from its description, is still read")
    func version2() throws {
        try Self.check("pbr2-version-0.10", made: RepeatRecordTests.version010Record())
    }
}
