import Foundation
import PushBridgeCore
@testable import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgeRecordCoding
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The repeat record (`PBR3`): every shape a decision can take comes back exactly, older records
/// are still read, and a damaged one is a store failure that names what is wrong.
@Suite("Repeat record")
struct RepeatRecordTests {
    static let phone = Certificate(name: "phone", busiId: nil, bundleId: "io.agora.chatdemo", environment: .development)
    static let tim = Certificate(name: nil, busiId: "2383", bundleId: "com.tencent.timdemo", environment: .production)
    static let bound = Instant(milliseconds: 1_772_442_900_000)

    static func device(_ token: String, _ certificate: Certificate = phone, boundAt: Instant = bound) -> Device {
        Device(token: token, certificate: certificate, boundAt: boundAt)
    }

    /// Decisions of every shape: patched payloads from two templates (one with the receiver's id,
    /// one whose id differs from the decision's receiver), payloads held as bytes (shortened alone,
    /// the same for everyone), devices with and without standard headers, tokens that are not
    /// lower-case hex, two certificates, and every reason.
    static func everyShape(reasons: [SuppressionReason] = SuppressionReason.allCases) -> [PushFacade.ReceiverDecision] {
        let easemob = PayloadTemplate(bytes: Array(#"{"aps":{"badge":1},"f":"u0","e":"x"}"#.utf8), badge: 16..<17, receiver: 23..<27)
        let agora = PayloadTemplate(bytes: Array(#"{"aps":{"alert":"hi","badge":12}}"#.utf8), badge: 29..<31, receiver: nil)
        let hex = String(repeating: "0f", count: 32)
        var decisions: [PushFacade.ReceiverDecision] = []
        func push(_ receiver: String, _ body: FanOutRequest.Body, _ targets: FanOutRequest.Targets, counter: Int) {
            decisions.append(.init(receiver: receiver, fanOut: .push(FanOutRequest(body: body, targets: targets, badgeCounter: counter))))
        }
        push("u1", .patched(easemob, badge: 3, receiver: "u1"), .devices([device(hex)]), counter: 3)
        push("u2", .patched(agora, badge: 12, receiver: "u2"), .devices([device(hex), device("ab" + hex, tim, boundAt: Instant(milliseconds: -5))]), counter: 12)
        push("u3", .patched(easemob, badge: -7, receiver: "\"quoted\" é"), .devices([device("ABCDEF")]), counter: 0)
        push("u4", .patched(agora, badge: 1_000_000, receiver: "u4"), .devices([device("abc"), device("zz"), device("")]), counter: 1_000_000)
        // Every hex digit, and the bytes either side of each digit range ("/", ":", "`", "g"): text, not packed.
        push("u4b", .patched(agora, badge: 2, receiver: "u4b"),
             .devices(["0123456789abcdef", "0/", "9:", "`a", "fg", "Af"].map { device($0) }), counter: 2)
        push("u5", .bytes(Array(#"{"aps":{"alert":"shortened…","badge":2}}"#.utf8)), .devices([device(hex, tim)]), counter: 2)
        push("u6", .bytes(Array(#"{"aps":{"alert":"same","badge":9}}"#.utf8)), .devices([device(hex)]), counter: 4)
        push("u7", .bytes(Array(#"{"aps":{"alert":"same","badge":9}}"#.utf8)), .devices([device(hex)]), counter: 5)
        push("u8", .patched(easemob, badge: 4, receiver: "u8"),
             .deliveries([APNsDelivery(device: device(hex), headers: [("apns-push-type", "background"), ("apns-topic", "x")]), APNsDelivery(device: device("cd" + hex))]),
             counter: 4)
        for (i, reason) in reasons.enumerated() {
            decisions.append(.init(receiver: "s\(i)", decision: .suppressed(reason)))
        }
        push("ü", .patched(agora, badge: 0, receiver: "ü"), .devices([device(hex)]), counter: 0)
        return decisions
    }

    @Test func everyShapeOfDecisionComesBackExactly() throws {
        let decisions = Self.everyShape()
        let record = SentMessageRecord.encode(decisions)
        #expect(record.starts(with: Array("PBR3".utf8)))
        let read = try SentMessageRecord.decode(record, messageID: "m")
        #expect(read == decisions)
        #expect(read.map(\.decision.jsonText) == decisions.map(\.decision.jsonText))
        #expect(read.map(\.decision.request?.payloadText) == decisions.map(\.decision.request?.payloadText))
        // What the JSON shows, written out: the patched values, the kept headers, the unpacked tokens.
        #expect(read[0].decision.request?.payloadText == #"{"aps":{"badge":3},"f":"u1","e":"x"}"#)
        #expect(read[2].decision.request?.payloadText == #"{"aps":{"badge":-7},"f":"\"quoted\" é","e":"x"}"#)
        #expect(read[3].decision.request?.payloadText == #"{"aps":{"alert":"hi","badge":1000000}}"#)
        #expect(read[3].decision.request?.deliveries.map(\.device.token) == ["abc", "zz", ""])
        #expect(read[2].decision.request?.deliveries.map(\.device.token) == ["ABCDEF"])
        #expect(read[4].decision.request?.deliveries.map(\.device.token) == ["0123456789abcdef", "0/", "9:", "`a", "fg", "Af"])
        #expect(read[8].decision.request?.deliveries.first?.headers.map(\.value) == ["background", "x"])
        #expect(read[8].decision.request?.deliveries.last?.hasStandardHeaders == true)
        #expect(read[1].decision.request?.deliveries.last?.device == Self.device("ab" + String(repeating: "0f", count: 32), Self.tim, boundAt: Instant(milliseconds: -5)))
        // A template is written once, however many receivers share it.
        let once = SentMessageRecord.encode(Array(repeating: decisions[1], count: 1_000))
        let template = Array(#""alert":"hi""#.utf8)
        #expect((0...(once.count - template.count)).filter { once[$0..<$0 + template.count].elementsEqual(template) }.count == 1)
        #expect(try SentMessageRecord.decode(once, messageID: "m") == Array(repeating: decisions[1], count: 1_000))
    }

    /// The rows of a roll for `decisions`, with one more row (a sender) at `skipped`: a pushed
    /// receiver's row has the decision's devices when they are plain devices (written as `0`), other
    /// devices when they have headers (written in full).
    static func roll(for decisions: [PushFacade.ReceiverDecision], skipped: Int) -> [StoredReceiver] {
        var rows = decisions.map { decision -> StoredReceiver in
            var state = UserState(user: decision.receiver, displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
            if let request = decision.decision.request {
                state.devices = request.deliveries.allSatisfy(\.hasStandardHeaders) ? request.deliveries.map(\.device) : [device("ee", tim)]
            }
            return StoredReceiver(key: nil, state: state, isConfigured: true)
        }
        var sender = UserState(user: "sender", displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
        sender.devices = [device(String(repeating: "5a", count: 32))]
        rows.insert(StoredReceiver(key: nil, state: sender, isConfigured: true), at: skipped)
        return rows
    }

    @Test("a record referring to a stored roll comes back exactly, and is a fraction of one that carries its receivers")
    func aRecordWithARollComesBackExactly() throws {
        let decisions = Self.everyShape()
        for skipped in [0, 5, decisions.count] {
            let rows = Self.roll(for: decisions, skipped: skipped)
            let stored = SentMessageRecord.encodeRoll(rows)
            #expect(stored.starts(with: Array("PBL1".utf8)))
            let record = SentMessageRecord.encode(decisions, roll: .init(id: 300, rows: rows, skipped: skipped))
            #expect(record.starts(with: Array("PBR4".utf8)))
            var asked: [Int64] = []
            let read = try SentMessageRecord.decode(record, messageID: "m") { id in
                asked.append(id)
                return id == 300 ? stored : nil
            }
            #expect(asked == [300])
            #expect(read == decisions)
            #expect(read.map(\.decision.jsonText) == decisions.map(\.decision.jsonText))
        }
        // Receivers that share their rows' devices (a fan-out's): a few bytes each instead of their names and tokens.
        var plain: [PushFacade.ReceiverDecision] = []
        var rows: [StoredReceiver] = []
        let template = PayloadTemplate(bytes: Array(#"{"aps":{"alert":"hi","badge":12}}"#.utf8), badge: 29..<31, receiver: nil)
        for i in 0..<1_000 {
            var state = UserState(user: "member-\(i)", displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
            state.devices = [Self.device(String(format: "%064x", i))]
            rows.append(StoredReceiver(key: nil, state: state, isConfigured: true))
            plain.append(.init(receiver: state.user, fanOut: i % 4 == 0 ? .suppressed(.online)
                : .push(FanOutRequest(body: .patched(template, badge: i % 9 + 1, receiver: state.user), targets: .devices(state.devices), badgeCounter: i % 9 + 1))))
        }
        let compact = SentMessageRecord.encode(plain, roll: .init(id: 1, rows: rows, skipped: nil))
        let full = SentMessageRecord.encode(plain)
        #expect(compact.count * 8 < full.count, "\(compact.count) bytes referring to the roll, \(full.count) carrying the receivers")
        #expect(try SentMessageRecord.decode(compact, messageID: "m") { _ in SentMessageRecord.encodeRoll(rows) } == plain)
    }

    @Test("decisions that are not their rows' are written in full; a record whose roll is missing or damaged names it")
    func aRollThatDoesNotFit() throws {
        let decisions = Self.everyShape()
        var rows = Self.roll(for: decisions, skipped: 2)
        rows[4].state.user = "someone else"
        #expect(SentMessageRecord.encode(decisions, roll: .init(id: 1, rows: rows, skipped: 2)).starts(with: Array("PBR3".utf8)))
        #expect(SentMessageRecord.encode(decisions, roll: .init(id: 1, rows: rows, skipped: nil)).starts(with: Array("PBR3".utf8)), "a row more than decisions")
        rows = Self.roll(for: decisions, skipped: 2)
        let record = SentMessageRecord.encode(decisions, roll: .init(id: 7, rows: rows, skipped: 2))
        func failure(_ roll: [UInt8]?) -> String {
            do {
                _ = try SentMessageRecord.decode(record, messageID: "m9") { _ in roll }
                return "read"
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(nil).contains("the sent-message record of \"m9\" is damaged: its receiver roll 7 is not stored"))
        let stored = SentMessageRecord.encodeRoll(rows)
        #expect(failure(Array(stored.dropLast(3))).contains("it ends early"))
        #expect(failure(stored + [1]).contains("bytes after the last row of its receiver roll 7"))
        #expect(failure(Array("PBR3".utf8) + stored.dropFirst(4)).contains("its receiver roll 7 is not a PushBridge roll"))
        #expect(failure(SentMessageRecord.encodeRoll(Array(rows.dropLast()))).contains("decisions for a roll of"))
        #expect(failure(stored) == "read")
    }

    /// A record written by PushBridge 0.10 or 0.11 (`PBR2`: every payload as a difference from the
    /// previous one, tokens as text, reasons as words), built here byte by byte from its description.
    @Test("numbering: the same number for the same key, first use said once, past the keys it scans")
    func numbering() {
        var numbering = SentMessageRecord.Numbering<String>()
        let keys = (0..<20).map { "k\($0)" }
        for (n, key) in keys.enumerated() {
            #expect(numbering.number(of: key) == (n, true))
            #expect(numbering.number(of: key) == (n, false))
        }
        for (n, key) in keys.enumerated().reversed() { #expect(numbering.number(of: key) == (n, false)) }
        #expect(numbering.number(of: "k20") == (20, true))
    }

    /// A `PBR2` record (PushBridge 0.10–0.11), built byte by byte from its description: u2 and u3
    /// pushed (u3's payload a difference from u2's), u4 suppressed.
    static func version010Record() -> [UInt8] {
        var w = RecordWriter()
        w.bytes = Array("PBR2".utf8)
        w.varint(3)
        func pushed(_ receiver: String, prefix: Int, suffix: Int, middle: String, badge: Int64, newCertificate: Bool) {
            w.string(receiver)
            w.bytes.append(1)
            w.varint(UInt64(prefix))
            w.varint(UInt64(suffix))
            w.string(middle)
            w.signed(badge)
            w.varint(1)
            w.string(String(repeating: "a1", count: 32))
            w.varint(0)
            if newCertificate {
                w.optional("phone")
                w.optional(nil)
                w.string("io.agora.chatdemo")
                w.string("development")
            }
            w.signed(Self.bound.milliseconds)
            w.bytes.append(0)
        }
        pushed("u2", prefix: 0, suffix: 0, middle: #"{"aps":{"alert":"hi","badge":3}}"#, badge: 3, newCertificate: true)
        pushed("u3", prefix: 29, suffix: 2, middle: "4", badge: 4, newCertificate: false)
        w.string("u4")
        w.bytes.append(0)
        w.string("not-mentioned")
        return w.bytes
    }

    @Test func aRecordFromVersion010IsStillRead() throws {
        let first = #"{"aps":{"alert":"hi","badge":3}}"#
        let second = #"{"aps":{"alert":"hi","badge":4}}"#
        let read = try SentMessageRecord.decode(Self.version010Record(), messageID: "old")
        let device = Self.device(String(repeating: "a1", count: 32))
        #expect(read == [
            .init(receiver: "u2", decision: .push(APNsRequest(payload: Array(first.utf8), deliveries: [APNsDelivery(device: device)], badgeCounter: 3))),
            .init(receiver: "u3", decision: .push(APNsRequest(payload: Array(second.utf8), deliveries: [APNsDelivery(device: device)], badgeCounter: 4))),
            .init(receiver: "u4", decision: .suppressed(.notMentioned)),
        ])
    }

    @Test func aDamagedRecordNamesWhatIsWrong() throws {
        let decisions = Self.everyShape()
        let record = SentMessageRecord.encode(decisions)
        func failure(_ bytes: [UInt8]) -> String {
            do {
                _ = try SentMessageRecord.decode(bytes, messageID: "m9")
                return "read"
            } catch {
                return "\(error)"
            }
        }
        #expect(failure(Array(record.dropLast(2))).contains("the sent-message record of \"m9\" is damaged: it ends early"))
        #expect(failure(record + [0]).contains("bytes after the last decision"))
        #expect(failure(Array("PBR9".utf8) + record.dropFirst(4)).contains("not a PushBridge record"))
        /// A `PBR3` record of one decision for `u1`, `decision` writing what follows the receiver.
        func oneDecision(_ decision: (inout RecordWriter) -> Void) -> String {
            var w = RecordWriter()
            w.bytes = Array("PBR3".utf8)
            w.varint(1)
            w.string("u1")
            decision(&w)
            return failure(w.bytes)
        }
        // A template whose badge place lies outside its bytes.
        #expect(oneDecision { w in
            w.bytes += [2, 0]
            w.string("{}")
            w.mark(5..<7)
            w.mark(nil)
        }.contains("template 0 of u1"))
        // A template number that was never written.
        #expect(oneDecision { w in w.bytes += [2, 3] }.contains("template 3 of u1"))
        // A reason code past the known reasons.
        #expect(oneDecision { w in w.bytes += [0, UInt8(SentMessageRecord.reasons.count)] }.contains("reason \(SentMessageRecord.reasons.count) of u1"))
        #expect(Set(SentMessageRecord.reasons) == Set(SuppressionReason.allCases), "every reason has a code")
    }
}

/// The SQLite store checkpoints its WAL on a thread of its own, not inside the commit that fills it.
@Suite("WAL checkpoints")
struct WALCheckpointTests {
    static func bigWrite(_ store: SQLiteStateStore) throws {
        try store.write { try $0.recordSentMessage("big", at: Instant(milliseconds: 0), decisions: Array(repeating: 7, count: 6_000_000), forgettingBefore: Instant(milliseconds: -1)) }
    }

    static func databaseBytes(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }

    @Test func aCommitPastTheThresholdHasTheWALCheckpointedInTheBackground() throws {
        let path = temporaryDatabase()
        let store = try SQLiteStateStore(path: path)
        #expect(store.backgroundCheckpoints == 0)
        try Self.bigWrite(store)
        let deadline = Date().addingTimeInterval(20)
        while store.backgroundCheckpoints == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        #expect(store.backgroundCheckpoints >= 1)
        #expect(try Self.databaseBytes(path) >= 6_000_000, "the record's pages were copied into the database file")
        // Still one store: the record reads back, on the writer and on a reader.
        #expect(try store.read { try $0.sentMessage("big", since: Instant(milliseconds: -1)) }?.count == 6_000_000)
        #expect(try SQLiteStateStore(path: path).read { try $0.sentMessage("big", since: Instant(milliseconds: -1)) }?.count == 6_000_000)
    }

    @Test func withoutTheThresholdSQLiteCheckpointsInTheCommit() throws {
        let path = temporaryDatabase()
        let store = try SQLiteStateStore(path: path, options: .init(backgroundCheckpointPages: 0))
        try Self.bigWrite(store)
        #expect(try Self.databaseBytes(path) >= 6_000_000, "SQLite's own checkpoint ran inside the commit")
        #expect(store.backgroundCheckpoints == 0)
    }

    @Test func smallCommitsAskForNoCheckpoint() throws {
        let store = try SQLiteStateStore(path: temporaryDatabase())
        for i in 0..<20 {
            try store.write { try $0.recordSentMessage("m\(i)", at: Instant(milliseconds: 0), decisions: [1, 2, 3], forgettingBefore: Instant(milliseconds: -1)) }
        }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(store.backgroundCheckpoints == 0)
    }
}
