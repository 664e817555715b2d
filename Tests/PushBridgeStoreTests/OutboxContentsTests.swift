import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// SQLite's outbox stores the request of a run of deliveries (a group message's members) once, and
/// every claim still gives each delivery its own headers and payload.
@Suite("The outbox's shared requests")
struct OutboxContentsTests {
    static func delivery(_ message: String, _ receiver: String, payload: String, topic: String = "io.pushbridge.app") -> OutboxDelivery {
        OutboxDelivery(
            messageID: message, receiver: receiver, token: String(repeating: receiver.hasSuffix("1") ? "ab" : "cd", count: 32),
            environment: .production, boundAt: Instant(milliseconds: 5),
            headers: [HeaderField("apns-push-type", "alert"), HeaderField("apns-topic", topic)], payload: Array(payload.utf8),
            queuedAt: Instant(milliseconds: 1_000))
    }

    static func path() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("contents-\(UUID().uuidString).sqlite").path
    }

    /// Claims every due delivery at `now` (milliseconds).
    static func claim(_ store: SQLiteStateStore, at now: Int64) throws -> [OutboxDelivery] {
        try store.write { try $0.claimDeliveries(dueBy: Instant(milliseconds: now), claimUntil: Instant(milliseconds: now + 1_000), limit: 100, taskLimit: 100) }
    }

    /// The deliveries as queued: without the ids the store gave them.
    static func queued(_ deliveries: [OutboxDelivery]) -> [OutboxDelivery] {
        deliveries.map { delivery in
            var queued = delivery
            queued.id = 0
            return queued
        }
    }

    @Test("A run of three or more with one request is stored once; a pair, a delivery of its own, or one whose headers differ, keeps its request in its row")
    func runsShareTheirRequest() throws {
        let path = Self.path()
        let store = try SQLiteStateStore(path: path)
        let queued = [
            Self.delivery("group", "u1", payload: #"{"aps":{"alert":"hi"}}"#),
            Self.delivery("group", "u2", payload: #"{"aps":{"alert":"hi"}}"#),
            Self.delivery("group", "u3", payload: #"{"aps":{"alert":"hi"}}"#),
            Self.delivery("own", "u4", payload: #"{"aps":{"alert":"only u4"}}"#),
            Self.delivery("topics", "u5", payload: #"{"aps":{"alert":"t"}}"#, topic: "io.pushbridge.a"),
            Self.delivery("topics", "u6", payload: #"{"aps":{"alert":"t"}}"#, topic: "io.pushbridge.b"),
            Self.delivery("second", "u7", payload: #"{"aps":{"badge":2}}"#),
            Self.delivery("second", "u8", payload: #"{"aps":{"badge":2}}"#),
            Self.delivery("second", "u9", payload: #"{"aps":{"badge":2}}"#),
            Self.delivery("pair", "u10", payload: #"{"aps":{"badge":3}}"#),
            Self.delivery("pair", "u11", payload: #"{"aps":{"badge":3}}"#),
        ]
        try store.write { try $0.enqueueDeliveries(queued) }
        #expect(try sqlite(path, "SELECT count(*) FROM delivery_contents") == ["2"])
        #expect(try sqlite(path, "SELECT receiver FROM deliveries WHERE content IS NOT NULL ORDER BY id") == ["u1", "u2", "u3", "u7", "u8", "u9"])
        #expect(try sqlite(path, "SELECT count(*) FROM deliveries WHERE content IS NOT NULL AND length(payload) + length(headers) > 0") == ["0"])

        let claimed = try Self.claim(store, at: 2_000)
        #expect(Self.queued(claimed) == queued, "the claim that enqueued them")
        // Another connection, as another process: it reads the shared requests from the table.
        let other = try SQLiteStateStore(path: path)
        let again = try Self.claim(other, at: 4_000)
        #expect(again == claimed, "claimed again after the lease, on a connection that kept nothing")
    }

    @Test("A group message's run keeps its render class's template once: each claim writes its receiver's badge and id again")
    func templates() throws {
        let path = Self.path()
        let store = try SQLiteStateStore(path: path)
        let written = Array(#"{"aps":{"alert":"hi","badge":7},"t":"u1"}"#.utf8)
        let badge = written.firstRange(of: Array("7".utf8))!
        let receiver = written.firstRange(of: Array(#""u1""#.utf8))!
        let template = PayloadTemplate(bytes: written, badge: badge, receiver: receiver)
        func member(_ user: String, _ value: Int, _ message: String = "group") -> OutboxDelivery {
            var delivery = Self.delivery(message, user, payload: "")
            delivery.payload = template.payload(badge: value, receiver: user)
            delivery.template = (template, value)
            return delivery
        }
        // u"2 needs escapes in its id: written again from the template, not patched.
        let queued = [member("u1", 7), member("u2", 12), member(#"u"2"#, 3), member("u4", 100)]
        #expect(String(decoding: queued[1].payload, as: UTF8.self) == #"{"aps":{"alert":"hi","badge":12},"t":"u2"}"#)
        // Another template with equal bytes is another render class: a run of its own.
        let other = PayloadTemplate(bytes: written, badge: badge, receiver: receiver)
        var alone = Self.delivery("other", "u5", payload: "")
        alone.payload = other.payload(badge: 1, receiver: "u5")
        alone.template = (other, 1)
        try store.write { try $0.enqueueDeliveries(queued + [alone]) }
        #expect(try sqlite(path, "SELECT count(*) FROM delivery_contents") == ["1"])
        #expect(try sqlite(path, "SELECT coalesce(badge, 'NULL') FROM deliveries ORDER BY id") == ["7", "12", "3", "100", "NULL"])
        #expect(try sqlite(path, "SELECT length(payload) FROM deliveries ORDER BY id") == ["0", "0", "0", "0", "\(alone.payload.count)"])

        #expect(Self.queued(try Self.claim(store, at: 2_000)) == queued + [alone])
        let other2 = try SQLiteStateStore(path: path)
        #expect(Self.queued(try Self.claim(other2, at: 4_000)) == queued + [alone], "read back from the table")
    }

    @Test("A group send through the facade queues its members' deliveries on one stored template; each claim sends what was decided")
    func groupSend() async throws {
        let path = Self.path()
        let store = try SQLiteStateStore(path: path)
        let facade = PushFacade(store: store, queuesDeliveries: true)
        try await facade.configure(FacadeScenario.app)
        let members = (0..<40).map { "m\($0)" }
        try store.write { transaction in
            for (i, member) in members.enumerated() {
                var state = UserState(user: member, displayStyle: .messageSummary, backgroundGraceSeconds: 120, timeZone: TimeZone(identifier: "UTC")!)
                state.devices = [Device(token: FacadeScenario.token(of: member), certificate: FacadeScenario.app.certificates[0])]
                state.badge = i % 3
                try transaction.save(state, replacing: nil)
            }
        }
        try await facade.setMembers(members, of: "g1")
        let prepared = try facade.prepare(FacadeScenario.groupMessage(from: "m0", to: "g1", text: "standup", id: "g-1"), dialect: "agora-silent", now: FacadeScenario.now)
        var decided: [UserID: [UInt8]] = [:]
        for item in try await facade.send(prepared).decisions {
            if case .push(let request) = item.decision { decided[item.receiver] = request.payload }
        }
        #expect(decided.count == 39)
        #expect(Set(decided.values).count > 1, "each member's payload has its own badge")
        #expect(try sqlite(path, "SELECT count(*) FROM delivery_contents") == ["1"])
        #expect(try sqlite(path, "SELECT count(*) FROM deliveries WHERE content IS NULL OR length(payload) > 0") == ["0"])
        let claimed = try await store.outbox.claimDeliveries(dueBy: Instant(milliseconds: .max / 2), claimUntil: Instant(milliseconds: .max / 2), limit: 100, taskLimit: 100)
        #expect(claimed.count == 39)
        for delivery in claimed { #expect(delivery.payload == decided[delivery.receiver], Comment(rawValue: delivery.receiver)) }
    }

    @Test("A run longer than an insert's 32 rows, between requests of their own, is claimed as queued")
    func longRuns() throws {
        let path = Self.path()
        let store = try SQLiteStateStore(path: path)
        let own = (0..<5).map { Self.delivery("own-\($0)", "u\($0)", payload: "message \($0)") }
        let shared = (0..<40).map { Self.delivery("group", "m\($0)", payload: "to all") }
        let queued = own + shared + own.prefix(2).map { var d = $0; d.messageID += "-again"; return d }
        try store.write { try $0.enqueueDeliveries(queued) }
        #expect(try sqlite(path, "SELECT count(*) FROM delivery_contents") == ["1"])
        #expect(try sqlite(path, "SELECT count(*) FROM deliveries WHERE content IS NULL") == ["7"])
        #expect(Self.queued(try Self.claim(store, at: 2_000)) == queued)
        #expect(Self.queued(try Self.claim(try SQLiteStateStore(path: path), at: 4_000)) == queued, "read back from the table")
    }

    @Test("A damaged content is named, not sent")
    func damagedContent() throws {
        let path = Self.path()
        let store = try SQLiteStateStore(path: path)
        try store.write { try $0.enqueueDeliveries(["u1", "u2", "u3"].map { Self.delivery("a", $0, payload: "same") }) }
        try sqlite(path, "UPDATE delivery_contents SET badge_start = 2, badge_end = 40")
        let other = try SQLiteStateStore(path: path)
        #expect(throws: StoreError.self) { try Self.claim(other, at: 2_000) }
        // Marks in reverse are damage too, never read as none.
        try sqlite(path, "UPDATE delivery_contents SET badge_start = 3, badge_end = 2")
        let third = try SQLiteStateStore(path: path)
        let error = try #require(throws: StoreError.self) { try Self.claim(third, at: 2_000) }
        #expect("\(error)".contains("delivery content 1: its marks are outside its payload"))
    }

    @Test("Pruning forgets a request once no delivery refers to it, and a request stored after it is claimed as itself")
    func pruning() throws {
        let path = Self.path()
        let store = try SQLiteStateStore(path: path)
        let first = ["u1", "u2", "u3"].map { Self.delivery("a", $0, payload: "first") }
        let second = ["u1", "u2", "u3"].map { Self.delivery("b", $0, payload: "second") }
        try store.write { try $0.enqueueDeliveries(first + second) }
        let claimed = try Self.claim(store, at: 2_000)
        #expect(claimed.count == 6)
        // a: all delivered; b: two delivered, one to be sent again.
        try store.write {
            try $0.settleDeliveries(
                claimed.dropLast().map { DeliverySettlement(id: $0.id, state: .delivered, status: 200) }
                    + [DeliverySettlement(id: claimed[5].id, state: .queued, status: 500, retryAt: Instant(milliseconds: 3_000))],
                at: Instant(milliseconds: 2_100))
        }
        #expect(try store.write { try $0.pruneDeliveries(settledBefore: Instant(milliseconds: 2_200)) } == 5)
        #expect(try sqlite(path, "SELECT payload FROM delivery_contents") == ["second"], "a's request is referred to by none")
        let retried = try Self.claim(store, at: 3_000)
        #expect(Self.queued(retried) == [second[2]].map { var d = $0; d.attempts = 1; return d })

        try store.write { try $0.settleDeliveries([DeliverySettlement(id: retried[0].id, state: .delivered, status: 200)], at: Instant(milliseconds: 3_100)) }
        #expect(try store.write { try $0.pruneDeliveries(settledBefore: Instant(milliseconds: 3_200)) } == 1)
        #expect(try sqlite(path, "SELECT count(*) FROM delivery_contents") == ["0"])
        // The table is empty: a new request may be given an id an old one had.
        let third = ["u1", "u2", "u3"].map { Self.delivery("c", $0, payload: "third") }
        try store.write { try $0.enqueueDeliveries(third) }
        #expect(Self.queued(try Self.claim(store, at: 4_000)) == third)
    }
}
