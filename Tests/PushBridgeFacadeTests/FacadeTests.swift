import CSQLite
import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The facade over both stores: the same contract on SQLite and on its in-memory twin.
@Suite("Facade")
struct FacadeTests {
    @Test("group fan-out excludes the sender, keeps membership order and commits badges", arguments: FacadeScenario.Backing.allCases)
    func groupFanOut(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2", "u3"] { try await FacadeScenario.register(user, in: facade) }
        try await facade.setMembers(["u3", "u1", "u4", "u2"], of: "g1")
        _ = try await facade.apply(FacadeScenario.json(#"{"call":"setSilentModeForConversation","conversationId":"g1","conversationType":"GroupChat","remindType":"None"}"#),
            dialect: "agora-silent", user: "u2", at: FacadeScenario.now)

        let first = try await facade.send(FacadeScenario.groupMessage(from: "u1", to: "g1"), dialect: "agora-silent", now: FacadeScenario.now)
        #expect(first.map(\.receiver) == ["u3", "u4", "u2"])
        #expect(first[0].decision.request?.badgeCounter == 1)
        #expect(first[1].decision == .suppressed(.noDevice))
        #expect(first[2].decision == .suppressed(.muted))

        let second = try await facade.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "m2"), dialect: "agora-silent", now: FacadeScenario.now)
        #expect(second[0].decision.request?.badgeCounter == 2)
        #expect(try await facade.user("u3")?.state.badge == 2)
        #expect(try await facade.user("u2")?.state.badge == 0, "a suppressed receiver's counter does not move")
        #expect(try await facade.user("u4")?.isConfigured == false, "a member no call has named stays unconfigured")
    }

    @Test("a batch of sends in one commit decides as the same sends one by one", arguments: FacadeScenario.Backing.allCases)
    func batchedSends(_ backing: FacadeScenario.Backing) async throws {
        func setUp() async throws -> PushFacade {
            let facade = await PushFacade(store: try backing.store())
            try await facade.configure(FacadeScenario.app)
            for user in ["u1", "u2", "u3"] { try await FacadeScenario.register(user, in: facade) }
            try await facade.setMembers(["u1", "u2", "u3"], of: "g1")
            return facade
        }
        let messages = [
            FacadeScenario.groupMessage(from: "u1", to: "g1", id: "m1"), FacadeScenario.groupMessage(from: "u2", to: "g1", text: "yes", id: "m2"),
            FacadeScenario.groupMessage(from: "u1", to: "g1", id: "m1"),  // a repeat of the first, inside the same batch
        ]
        let batched = try await setUp()
        let results = try await batched.send(messages.map { try batched.prepare($0, dialect: "agora-silent", now: FacadeScenario.now) })
        let oneByOne = try await setUp()
        var expected: [PushFacade.SendOutcome] = []
        for message in messages { expected.append(try await oneByOne.sendMessage(message, dialect: "agora-silent", now: FacadeScenario.now)) }
        #expect(try results.map { try $0.get() } == expected)
        #expect(expected.map(\.isRepeat) == [false, false, true])
        #expect(expected[1].decisions.first { $0.receiver == "u3" }?.decision.request?.badgeCounter == 2, "the second send sees the first's counter")
        for user in ["u1", "u2", "u3"] {
            let badge = try await oneByOne.user(user)?.state.badge
            #expect(try await batched.user(user)?.state.badge == badge)
        }
    }

    static func directMessage(from sender: UserID, to receiver: UserID, id: String) -> JSONValue {
        FacadeScenario.json(#"{"id":"\#(id)","conversationId":"\#(receiver)","from":"\#(sender)","to":"\#(receiver)","chatType":"Chat","body":{"type":"text","text":"hi \#(id)"}}"#)
    }

    @Test("a long batch (counters past the badge log's threshold, records in multi-row inserts) ends as the same sends one by one", arguments: FacadeScenario.Backing.allCases)
    func longBatch(_ backing: FacadeScenario.Backing) async throws {
        // 70 users: more counters in the batch than the badge log's threshold (64).
        let users = (1...70).map { "u\($0)" }
        func setUp() async throws -> PushFacade {
            let facade = await PushFacade(store: try backing.store())
            try await facade.configure(FacadeScenario.app)
            for user in users { try await FacadeScenario.register(user, in: facade) }
            try await facade.setMembers(users, of: "g1")
            return facade
        }
        // 150 messages: one-to-one (each user counted several times), a group message now and then,
        // and every 40th a repeat of an earlier id.
        let messages = (0..<150).map { i in
            if i % 40 == 39 { return Self.directMessage(from: users[(i - 30) % 70], to: users[((i - 30) * 7 + 3) % 70], id: "d\(i - 30)") }
            if i % 25 == 0 { return FacadeScenario.groupMessage(from: users[i % 70], to: "g1", id: "g\(i)") }
            return Self.directMessage(from: users[i % 70], to: users[(i * 7 + 3) % 70], id: "d\(i)")
        }
        let batched = try await setUp()
        let results = try await batched.send(messages.map { try batched.prepare($0, dialect: "agora-silent", now: FacadeScenario.now) })
        let oneByOne = try await setUp()
        var expected: [PushFacade.SendOutcome] = []
        for message in messages { expected.append(try await oneByOne.sendMessage(message, dialect: "agora-silent", now: FacadeScenario.now)) }
        #expect(try results.map { try $0.get() } == expected)
        #expect(expected.filter(\.isRepeat).count == 3)
        var highest = 0
        for user in users {
            let badge = try await oneByOne.user(user)?.state.badge
            highest = max(highest, badge ?? 0)
            #expect(try await batched.user(user)?.state.badge == badge)
        }
        #expect(highest >= 8, "counters climbed through the batch")
        for message in expected where !message.isRepeat {
            #expect(try await batched.sentMessage(message.messageID, now: FacadeScenario.now) == message.decisions, "the record of \(message.messageID)")
        }
        // Sent again after the batch, one by one: the repeats and the next counters agree too.
        let later = [Self.directMessage(from: "u1", to: "u2", id: "d1"), Self.directMessage(from: "u1", to: "u2", id: "after")]
        for message in later {
            #expect(try await batched.sendMessage(message, dialect: "agora-silent", now: FacadeScenario.now) == oneByOne.sendMessage(message, dialect: "agora-silent", now: FacadeScenario.now))
        }
    }

    @Test("records written together read back as one by one: a later id replaces an earlier, each id with its own cutoff", arguments: FacadeScenario.Backing.allCases)
    func recordsTogether(_ backing: FacadeScenario.Backing) async throws {
        let store = try await backing.store()
        try await store.writeRecords([SentMessage(id: "old", sentAt: Instant(milliseconds: 0), decisions: [1])], forgettingBefore: Instant(milliseconds: -1))
        // 35 records together (multi-row inserts), then r5 and r22 again (the later wins).
        let records = (0..<35).map { SentMessage(id: "r\($0)", sentAt: Instant(milliseconds: 10_000 + 1_000 * Int64($0)), decisions: [UInt8($0), 0xff]) }
        try await store.writeRecords(records, forgettingBefore: Instant(milliseconds: 2_000))
        try await store.writeRecords(
            [SentMessage(id: "r5", sentAt: Instant(milliseconds: 60_000), decisions: [5, 5]), SentMessage(id: "r22", sentAt: Instant(milliseconds: 3_000), decisions: [])],
            forgettingBefore: Instant(milliseconds: 2_000))
        // 40 questions (three queries of 16 or fewer): known, unknown, forgotten, before and after a cutoff.
        let questions: [(id: String, since: Instant)] = (0..<40).map { (i: Int) -> (id: String, since: Instant) in
            let id: String = i == 39 ? "nobody" : i == 38 ? "old" : "r\(i)"
            return (id, Instant(milliseconds: Int64(i % 4) * 7_000))
        }
        let together = try await store.records(questions)
        var alone: [[UInt8]?] = []
        for question in questions { alone.append(contentsOf: try await store.records([question])) }
        #expect(together == alone)
        #expect(alone[5] == [5, 5], "the later r5 replaced the earlier")
        #expect(alone[22] == nil && alone[21] == [21, 0xff], "r22 was sent again before its question's cutoff; r21 after it")
        #expect(alone[36] == nil, "r36 was never sent")
        #expect(alone[38] == nil, "forgotten: sent before the batch's cutoff")
        #expect(try await store.records([("old", Instant(milliseconds: -10))]) == [nil])
        #expect(alone[39] == nil)
        #expect(alone[3] == nil && alone[6] == [6, 0xff], "r3 was sent before its question's cutoff, r6 after")
        #expect(together.compactMap { $0 }.count == 31)
    }

    @Test("a message that fails inside a batch leaves nothing behind; the others are kept", arguments: FacadeScenario.Backing.allCases)
    func failureInsideBatch(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: facade) }
        // A damaged record under "bad": sending that id again cannot read it, so it fails.
        try await facade.store.writeRecords([SentMessage(id: "bad", sentAt: FacadeScenario.now, decisions: [0x50, 0x42])], forgettingBefore: Instant(milliseconds: 0))
        let messages = [
            Self.directMessage(from: "u1", to: "u2", id: "m1"), Self.directMessage(from: "u1", to: "u2", id: "bad"),
            Self.directMessage(from: "u1", to: "u2", id: "m3"),
        ]
        let results = try await facade.send(messages.map { try facade.prepare($0, dialect: "agora-silent", now: FacadeScenario.now) })
        #expect(try results[0].get().decisions[0].decision.request?.badgeCounter == 1)
        #expect(throws: StoreError.self) { try results[1].get() }
        #expect(try results[2].get().decisions[0].decision.request?.badgeCounter == 2, "the failed message counted nothing")
        #expect(try await facade.user("u2")?.state.badge == 2)
        #expect(try await facade.sentMessage("m1", now: FacadeScenario.now) == results[0].get().decisions)
        #expect(try await facade.sentMessage("m3", now: FacadeScenario.now) == results[2].get().decisions)
        #expect(try await facade.store.records([("bad", Instant(milliseconds: 0))]) == [[0x50, 0x42]], "its record is as it was")
    }

    @Test("one-to-one goes to the target only; an unknown target is no-device", arguments: FacadeScenario.Backing.allCases)
    func oneToOne(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        try await FacadeScenario.register("u2", in: facade)
        let message = FacadeScenario.json(#"{"id":"m1","conversationId":"u2","from":"u1","to":"u2","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
        let decisions = try await facade.send(message, dialect: "agora-silent", now: FacadeScenario.now)
        #expect(decisions.map(\.receiver) == ["u2"])
        #expect(decisions[0].decision.request?.payloadText == #"{"aps":{"alert":{"body":"You have a new message"},"badge":1,"sound":"default"},"f":"u1","m":"m1","t":"u2"}"#)
        let unknown = FacadeScenario.json(#"{"id":"m2","conversationId":"u9","from":"u1","to":"u9","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
        #expect(try await facade.send(unknown, dialect: "agora-silent", now: FacadeScenario.now).map(\.decision) == [.suppressed(.noDevice)])
        #expect(try await facade.user("u9") == nil, "sending to a stranger stores nothing")
    }

    @Test("a rejected call in a batch changes nothing and names its pointer", arguments: FacadeScenario.Backing.allCases)
    func rejectedBatchChangesNothing(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        try await FacadeScenario.register("u2", in: facade)
        let before = try #require(try await facade.user("u2")).state
        let calls: [PushFacade.DialectCall] = [
            .init(FacadeScenario.json(#"{"call":"setSilentModeForAll","remindType":"None"}"#), at: FacadeScenario.now, pointer: .root / 0),
            .init(FacadeScenario.json(#"{"call":"setSilentModeForAll","silentModeDuration":10081}"#), at: FacadeScenario.now, pointer: .root / 1),
        ]
        let error = try await #require(throws: InputError.self) { try await facade.apply(calls, dialect: "agora-silent", user: "u2") }
        #expect(error.pointer.description == "/1/silentModeDuration")
        #expect(error.code == .outOfRange)
        #expect(try await facade.user("u2")?.state == before)

        // Bad input in a message changes no badge either.
        try await facade.setMembers(["u1", "u2"], of: "g1")
        var bad = FacadeScenario.groupMessage(from: "u1", to: "g1").objectValue!
        bad["body"] = FacadeScenario.json(#"{"type":"sticker"}"#)
        await #expect(throws: InputError.self) { try await facade.send(.object(bad), dialect: "agora-silent", now: FacadeScenario.now) }
        #expect(try await facade.user("u2")?.state == before)

        // Bad group input.
        let duplicate = try await #require(throws: InputError.self) { try await facade.setMembers(["u1", "u1"], of: "g1") }
        #expect(duplicate.pointer.description == "/1")
        #expect(try await facade.members(of: "g1") == ["u1", "u2"])
    }

    @Test("queries read the stored state, in any dialect", arguments: FacadeScenario.Backing.allCases)
    func queriesFromTheStore(_ backing: FacadeScenario.Backing) async throws {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(AppConfiguration(certificates: [
            Certificate(name: "apnsTest", busiId: nil, bundleId: "com.easemob.chatdemoui", environment: .development)
        ]))
        _ = try await facade.apply(FacadeScenario.json(#"{"call":"disableOfflinePushStart","start":22,"end":8}"#), dialect: "easemob-legacy", user: "6006", at: FacadeScenario.now)
        let agora = try await facade.query(FacadeScenario.json(#"{"call":"getSilentModeForAll"}"#), dialect: "agora-silent", user: "6006", now: FacadeScenario.now)
        #expect(agora["silentModeStartTime"] == .string("22:00"))
        #expect(agora["silentModeEndTime"] == .string("8:00"))
        let result = try await facade.apply(FacadeScenario.json(#"{"call":"getPushOptionsFromServer"}"#), dialect: "easemob-legacy", user: "6006", at: FacadeScenario.now)
        #expect(result?["noDisturbingStartH"] == .int(22))
    }

    @Test func stateSurvivesReopeningAndMigrationsAreRecordedOnce() async throws {
        let path = temporaryDatabase()
        do {
            let facade = PushFacade(store: try SQLiteStateStore(path: path))
            try await facade.configure(FacadeScenario.app)
            try await FacadeScenario.register("u2", in: facade)
            try await facade.setMembers(["u1", "u2"], of: "g1")
            _ = try await facade.send(FacadeScenario.groupMessage(from: "u1", to: "g1"), dialect: "agora-silent", now: FacadeScenario.now)
        }
        let store = try SQLiteStateStore(path: path)
        #expect(try store.appliedMigrations() == SQLiteStateStore.migrationIdentifiers)
        let facade = PushFacade(store: store)
        #expect(try await facade.app() == FacadeScenario.app)
        #expect(try await facade.members(of: "g1") == ["u1", "u2"])
        let u2 = try #require(try await facade.user("u2"))
        #expect(u2.state.badge == 1)
        #expect(u2.state.devices.map(\.token) == [FacadeScenario.token(of: "u2")])
    }

    @Test func aDatabaseFromANewerPushBridgeIsRefused() throws {
        let path = temporaryDatabase()
        _ = try SQLiteStateStore(path: path)
        try sqlite(path, "INSERT INTO pushbridge_migrations VALUES ('2099-01-01-from-the-future', 0)")
        let error = try #require(throws: StoreError.self) { try SQLiteStateStore(path: path) }
        #expect(error.code == .newerSchema)
        #expect(error.description.contains("2099-01-01-from-the-future"))
    }

    @Test func aReadTransactionRefusesChanges() throws {
        for store in [try SQLiteStateStore(path: ":memory:") as any TransactionStore, MemoryStateStore()] {
            let error = try #require(throws: StoreError.self) { try store.read { try $0.setMembers(["a"], of: "g") } }
            #expect(error.code == .readOnly)
        }
    }

    @Test("a group message costs the same statements for 10 or 1,000 members")
    func fanOutIsBoundedInStatements() async throws {
        func statements(members: Int) async throws -> Int {
            let store = try SQLiteStateStore(path: ":memory:")
            let facade = PushFacade(store: store)
            try await facade.configure(FacadeScenario.app)
            try store.write { transaction in
                for i in 0..<members {
                    var state = UserState(user: "m\(i)", displayStyle: .messageSummary, backgroundGraceSeconds: 120)
                    state.devices = [Device(token: FacadeScenario.token(of: "m\(i)"), certificate: FacadeScenario.app.certificates[0])]
                    try transaction.save(state, replacing: nil)
                }
            }
            try await facade.setMembers((0..<members).map { "m\($0)" }, of: "g1")
            let before = store.statementsStarted
            let decisions = try await facade.send(FacadeScenario.groupMessage(from: "m0", to: "g1"), dialect: "agora-silent", now: FacadeScenario.now)
            #expect(decisions.count == members - 1)
            #expect(decisions.allSatisfy { $0.decision.request != nil })
            return store.statementsStarted - before
        }
        let small = try await statements(members: 10)
        // app, sender, the group's size (join or scans), receivers, their devices, the repeat check, badges,
        // the sent-message record and the roll it refers to (its row and its bytes), their pruning, and the
        // group's profile (whether its offline push is on: Specification §14).
        #expect(small <= 20)
        #expect(try await statements(members: 1_000) == small)
    }
}
