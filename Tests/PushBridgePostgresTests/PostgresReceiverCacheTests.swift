import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PostgresNIO
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// A node keeps a group's receivers and the badge log between its writes, kept
/// true by its own writes and dropped when another node's write moves the data version; group sends
/// log their counters as one row, folded past the limit; records refer to one stored roll.
@Suite("PostgreSQL receiver cache")
struct PostgresReceiverCacheTests {
    /// Members of the test group: more than the badge log's threshold (64), so group sends log.
    static let members = (0..<80).map { "m\($0)" }

    /// Two nodes' stores on one new schema with the example app and group g1 of ``members``.
    static func twoNodes(badgeLogLimitA: Int = 1_000_000, badgeLogRowLimitA: Int = 100_000, foldedAtOnceA: Int = 50_000) async throws -> (a: PostgresStateStore, b: PostgresStateStore)? {
        guard let url = testPostgresURL() else { return nil }
        let location = try freshPostgresSchema(url)
        let a = try await PostgresStateStore.open(location: location, app: "", pool: PostgresConnections(location: location, limit: 2, logger: .init(label: "a"), runsItself: true), badgeLogLimit: badgeLogLimitA, badgeLogRowLimit: badgeLogRowLimitA, foldedAtOnce: foldedAtOnceA)
        let b = try await PostgresStateStore.open(location: location, app: "", pool: PostgresConnections(location: location, limit: 2, logger: .init(label: "b"), runsItself: true))
        let facade = PushFacade(store: a)
        try await facade.configure(FacadeScenario.app)
        for user in members { try await FacadeScenario.register(user, in: facade) }
        try await facade.setMembers(members, of: "g1")
        return (a, b)
    }

    static func send(_ store: PostgresStateStore, _ id: String, from sender: UserID = "m0") async throws -> [ReceiverDecision] {
        try await PushFacade(store: store).send(FacadeScenario.groupMessage(from: sender, to: "g1", id: id), dialect: "agora-silent", now: FacadeScenario.now)
    }

    /// Each receiver's device tokens, by name (empty: not pushed).
    static func tokens(_ decisions: [ReceiverDecision]) -> [UserID: [String]] {
        Dictionary(uniqueKeysWithValues: decisions.map { ($0.receiver, $0.decision.request?.deliveries.map(\.device.token) ?? []) })
    }

    /// Runs SQL on the store's schema behind every node's back (it moves no data version).
    static func behindTheNodesBack(_ store: PostgresStateStore, _ sql: String) async throws {
        try await store.pool.use(schema: store.schema) { try await $0.execute(sql) }
    }

    static func count(_ store: PostgresStateStore, _ sql: String) async throws -> Int64 {
        let rows = try await store.pool.use(schema: store.schema) { try await $0.query(PostgresQuery(unsafeSQL: sql)) }
        return try Cells(try #require(rows.first)).int64(0)
    }

    @Test("a warm group send uses the node's kept receivers until another node's write moves the data version; another node's sends only count on")
    func keptReceiversFollowOtherNodes() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        await #expect(Self.tokens(try Self.send(a, "x1"))["m5"] == [FacadeScenario.token(of: "m5")])
        // Changed without moving the version: node A's kept table still has m5's device, so its
        // next send pushes it (this is what shows the table is kept, not read again).
        try await Self.behindTheNodesBack(a, "DELETE FROM devices WHERE user_id = (SELECT id FROM users WHERE name = 'm5')")
        await #expect(Self.tokens(try Self.send(a, "x2"))["m5"] == [FacadeScenario.token(of: "m5")], "node A's warm send reads no member rows")
        // Node B reads the rows (its first send); its counters move no version: A's table stays, counted on.
        await #expect(Self.tokens(try Self.send(b, "x3"))["m5"] == [])
        await #expect(Self.tokens(try Self.send(a, "x4"))["m5"] == [FacadeScenario.token(of: "m5")], "node B's send moved no data version")
        #expect(try await PushFacade(store: a).user("m1")?.state.badge == 4, "node A counted on from node B's log row")
        // A write that changes what nodes keep (m6's device removed on node B) moves it: A reads the rows again.
        try await PushFacade(store: b).removeDevice(token: FacadeScenario.token(of: "m6"))
        await #expect(Self.tokens(try Self.send(a, "x5"))["m5"] == [], "node A's next send after node B's write")
        // Counters went on across the nodes: five pushes each for the others, three for m5.
        let facade = PushFacade(store: b)
        #expect(try await facade.user("m1")?.state.badge == 5)
        #expect(try await facade.user("m5")?.state.badge == 3)
        #expect(try await PushFacade(store: a).user("m79")?.state.badge == 5)
    }

    @Test("the node's own writes keep its kept receivers true: settings, a device that moves, a removed user, members")
    func ownWritesKeepTheTableTrue() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let facade = PushFacade(store: a)
        _ = try await Self.send(a, "y1")  // kept
        // m7 binds m6's device (the token moves to m7); m8 turns this group's pushes off; m9 is removed.
        _ = try await facade.apply(
            [.init(FacadeScenario.json(#"{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(FacadeScenario.token(of: "m6"))"}"#), at: FacadeScenario.now, pointer: .root / 0)],
            dialect: "agora-silent", user: "m7")
        _ = try await facade.apply(
            [.init(FacadeScenario.json(#"{"call":"setSilentModeForConversation","conversationId":"g1","conversationType":"GroupChat","remindType":"None"}"#), at: FacadeScenario.now, pointer: .root / 0)],
            dialect: "agora-silent", user: "m8")
        let kept = try await Self.send(a, "y2")
        // The same send decided from the rows (node B keeps nothing yet): the same receivers and devices.
        let read = try await Self.send(b, "y3")
        #expect(Self.tokens(kept) == Self.tokens(read))
        #expect(Self.tokens(kept)["m6"] == [], "m6's device moved to m7")
        #expect(Self.tokens(kept)["m7"] == [FacadeScenario.token(of: "m6"), FacadeScenario.token(of: "m7")])
        #expect(Self.tokens(kept)["m8"] == [], "m8 turned the group's pushes off")
        try await facade.removeUser("m9")
        await #expect(try Self.send(a, "y4").first { $0.receiver == "m9" } == nil, "a removed user is no member")
        // A membership change on node A itself.
        try await facade.setMembers(["m0", "m1", "m2"], of: "g1")
        await #expect(try Self.send(a, "y5").map(\.receiver) == ["m1", "m2"])
    }

    /// A receiver as the store hands it out, comparable.
    struct Row: Equatable {
        var key: Int64?
        var state: UserState
        var configured: Bool
    }

    /// Group g1's receivers for a message from m0: node A's in a write (kept), node B's in a read (never kept).
    static func receivers(_ store: PostgresStateStore, kept: Bool) async throws -> [Row] {
        let body = { (transaction: PostgresStateStore.Transaction) in
            try await transaction.receivers(of: .group("g1"), excluding: "m0", conversation: ConversationKey(.group, "g1"))
                .map { Row(key: $0.key?.rawValue, state: $0.state, configured: $0.isConfigured) }
        }
        return kept ? try await store.writing(body) : try await store.reading(body)
    }

    @Test("kept receivers equal a fresh read after every kind of change, on this node and on the other")
    func keptReceiversEqualAFreshRead() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let facade = PushFacade(store: a)
        let other = PushFacade(store: b)
        try await facade.addMembers(["x1"], to: "g1")  // known by name only
        var round = 0
        func check(_ what: String) async throws {
            round += 1
            _ = try await Self.send(a, "c\(round)")  // kept, counted in the log and in the table
            await #expect(try Self.receivers(a, kept: true) == Self.receivers(b, kept: false), "after \(what)")
        }
        try await check("the first load")
        try await check("a warm send")
        try await facade.apply(FacadeScenario.json(#"{"call":"setSilentModeForConversation","conversationId":"g1","conversationType":"GroupChat","remindType":"None"}"#),
            dialect: "agora-silent", user: "m3", at: FacadeScenario.now)
        try await check("a conversation setting")
        try await facade.setPresence(.online, of: "m17", dialect: "agora-silent")
        try await check("a presence change")
        try await facade.updateUser("m22", dialect: "agora-silent") { $0.badge = 7 }  // the log has m22: the saved counter is logged too
        try await check("a counter set")
        try await facade.updateUser("m11", dialect: "agora-silent") { $0.devices.insert(Device(token: FacadeScenario.token(of: "m12"), certificate: FacadeScenario.app.certificates[0]), at: 0) }
        try await check("a device moving from one member to another")
        try await facade.register("x1", dialect: "agora-silent")
        try await check("an unconfigured member registering")
        try await facade.addMembers(["late"], to: "g1")
        try await check("a member added")
        try await facade.removeMember("m13", from: "g1")
        try await check("a member removed")
        try await facade.removeUser("m14")
        try await check("a user forgotten")
        try await facade.removeDevice(token: FacadeScenario.token(of: "m15"))
        try await check("a device removed")
        try await other.updateUser("m16", dialect: "agora-silent") { $0.badge = 40; $0.language = "fr" }
        try await check("the other node's change")
        _ = try await other.send(FacadeScenario.groupMessage(from: "m1", to: "g1", id: "other"), dialect: "agora-silent", now: FacadeScenario.now)
        try await check("the other node's send")
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await a.writing { transaction in
                _ = try await transaction.receivers(of: .group("g1"), excluding: "m0", conversation: ConversationKey(.group, "g1"))
                var state = try #require(try await transaction.user("m17")).state
                state.presence = .background(since: FacadeScenario.now)
                try await transaction.save(state, replacing: nil)
                throw Refused()
            }
        }
        try await check("a rolled-back write")
    }

    @Test("one-to-one receivers kept by a node follow changes on either node, and their counters count on across nodes")
    func keptOneToOneReceivers() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let (facade, other) = (PushFacade(store: a), PushFacade(store: b))
        func send(_ store: PostgresStateStore, _ id: String) async throws -> ReceiverDecision? {
            try await PushFacade(store: store).send(
                FacadeScenario.json(#"{"id":"\#(id)","conversationId":"m1","from":"m0","to":"m1","chatType":"Chat","body":{"type":"text","text":"hi"}}"#),
                dialect: "agora-silent", now: FacadeScenario.now).first
        }
        await #expect(try send(a, "o1")?.decision.request?.badgeCounter == 1)
        await #expect(try send(a, "o2")?.decision.request?.badgeCounter == 2, "kept: counted in place")
        try await other.removeDevice(token: FacadeScenario.token(of: "m1"))
        await #expect(try send(a, "o3")?.decision.request == nil, "node B removed m1's only device")
        try await FacadeScenario.register("m1", in: facade)
        await #expect(try send(a, "o4")?.decision.request?.deliveries.map(\.device.token) == [FacadeScenario.token(of: "m1")], "bound again on node A")
        await #expect(try send(b, "o5")?.decision.request?.badgeCounter == 4, "node B counts on")
        await #expect(try send(a, "o6")?.decision.request?.badgeCounter == 5, "and node A after it")
    }

    @Test("group sends log their counters as one row; reads and the other node see them; past the limit the log is folded")
    func badgeLogAcrossNodes() async throws {
        guard let (a, b) = try await Self.twoNodes(badgeLogLimitA: 200, foldedAtOnceA: 30) else { return }  // a fold of 79 counters: 3 statements
        _ = try await Self.send(a, "z1")
        _ = try await Self.send(a, "z2")
        await #expect(try Self.count(a, "SELECT count(*) FROM badge_log") == 2, "one row a group send")
        await #expect(try Self.count(a, "SELECT count(*) FROM badge_counters WHERE badge > 0") == 0, "the counters are in the log")
        #expect(try await PushFacade(store: a).user("m3")?.state.badge == 2, "a read on node A")
        #expect(try await PushFacade(store: b).user("m3")?.state.badge == 2, "a read on node B")
        let fromB = try await Self.send(b, "z3")
        #expect(fromB.first { $0.receiver == "m3" }?.decision.request?.badgeCounter == 3)
        // 4 × 79 entries pass node A's limit of 200: its send folds the log into the counters.
        let fromA = try await Self.send(a, "z4")
        #expect(fromA.first { $0.receiver == "m3" }?.decision.request?.badgeCounter == 4)
        await #expect(try Self.count(a, "SELECT count(*) FROM badge_log") == 0, "folded")
        await #expect(try Self.count(a, "SELECT count(*) FROM badge_counters WHERE badge = 4") == 79)
        // A one-to-one send on node B after the fold counts on from 4; so does the next group send.
        let oneToOne = FacadeScenario.json(#"{"id":"o1","conversationId":"m3","from":"m0","to":"m3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
        await #expect(try PushFacade(store: b).send(oneToOne, dialect: "agora-silent", now: FacadeScenario.now).first?.decision.request?.badgeCounter == 5)
        let last = try await Self.send(a, "z5", from: "m1")
        #expect(last.first { $0.receiver == "m3" }?.decision.request?.badgeCounter == 6)
        #expect(last.first { $0.receiver == "m0" }?.decision.request?.badgeCounter == 1, "m0 sent the others: its first push")
    }

    @Test("one-to-one counters are log rows that move no data version; past the row limit the log is folded, and both nodes count on")
    func oneToOneRowsFold() async throws {
        guard let (a, b) = try await Self.twoNodes(badgeLogRowLimitA: 4) else { return }
        func send(_ store: PostgresStateStore, _ id: String) async throws -> Int? {
            let message = FacadeScenario.json(#"{"id":"\#(id)","conversationId":"m3","from":"m0","to":"m3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
            return try await PushFacade(store: store).send(message, dialect: "agora-silent", now: FacadeScenario.now).first?.decision.request?.badgeCounter
        }
        let version = try await Self.count(a, "SELECT data_version FROM apps WHERE id = ''")
        await #expect(try send(a, "p1") == 1)
        await #expect(try send(b, "p2") == 2)
        await #expect(try Self.count(a, "SELECT data_version FROM apps WHERE id = ''") == version, "counters moved no data version")
        await #expect(try Self.count(a, "SELECT count(*) FROM badge_log WHERE users = ARRAY[(SELECT id FROM users WHERE name = 'm3')]") == 2, "each row lists m3")
        for i in 3...6 {
            let outcome = try await PostgresOneRoundTripTests.commit(a, [try PostgresOneRoundTripTests.prepare(
                FacadeScenario.json(#"{"id":"p\#(i)","conversationId":"m3","from":"m0","to":"m3","chatType":"Chat","body":{"type":"text","text":"hi"}}"#), on: a)])
            #expect(outcome.first?.decisions.first?.decision.request?.badgeCounter == i)
        }
        await #expect(try Self.count(a, "SELECT count(*) FROM badge_log") < 4, "folded past node A's 4 rows")
        await #expect(try send(b, "p7") == 7, "node B counts on after the fold")
        await #expect(try PushFacade(store: a).user("m3")?.state.badge == 7)
        await #expect(try send(a, "p8") == 8)
    }

    @Test("a group message's record refers to one stored roll: repeats answer the first decisions on either node")
    func recordsReferToOneRoll() async throws {
        guard let (a, b) = try await Self.twoNodes() else { return }
        let first = try await Self.send(a, "r1")
        _ = try await Self.send(a, "r2")
        await #expect(try Self.count(a, "SELECT count(*) FROM receiver_rolls") == 1, "the sends to the kept group share one roll")
        let facade = PushFacade(store: a)
        let repeated = try await facade.send(FacadeScenario.groupMessage(from: "m0", to: "g1", id: "r1"), dialect: "agora-silent", now: FacadeScenario.now)
        #expect(repeated == first, "a repeat on node A")
        #expect(try await PushFacade(store: b).sentMessage("r1", now: FacadeScenario.now) == first, "the record read on node B")
    }

    @Test("a write rolled back leaves nothing kept that the database does not hold")
    func rollbacksDropWhatIsKept() async throws {
        guard let (a, _) = try await Self.twoNodes() else { return }
        struct Refused: Error {}
        _ = try await Self.send(a, "k1")  // kept, every counter 1
        await #expect(throws: Refused.self) {
            try await a.writing { transaction in
                let receivers = try await transaction.receivers(of: .group("g1"), excluding: "m0", conversation: ConversationKey(.group, "g1"))
                try await transaction.writeSendEffects(
                    badges: receivers.compactMap { $0.key.map { ($0, 50) } }, deliveries: [], records: [], forgettingBefore: Instant(milliseconds: .min))
                throw Refused()
            }
        }
        let next = try await Self.send(a, "k2")
        #expect(next.first { $0.receiver == "m3" }?.decision.request?.badgeCounter == 2, "counted on from the database's 1")
        #expect(try await PushFacade(store: a).user("m3")?.state.badge == 2)
    }
}
