import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// The awaited send: the store reads what the batch names, the facade decides, the store commits
/// (``PushStateStore/update(reading:deciding:)``) — the same outcomes as the send in a transaction,
/// on every store.
@Suite("Sending as an update")
struct UpdateTests {
    /// A facade over `backing` with users u1…u4 registered and a group g1 of all four.
    static func scenario(_ backing: FacadeScenario.Backing) throws -> PushFacade {
        let facade = PushFacade(store: try backing.store())
        try facade.configure(FacadeScenario.app)
        for user in ["u1", "u2", "u3", "u4"] { try FacadeScenario.register(user, in: facade) }
        try facade.setMembers(["u1", "u2", "u3", "u4"], of: "g1")
        return facade
    }

    static func prepare(_ facade: PushFacade, _ messages: [JSONValue]) throws -> [PushFacade.PreparedMessage] {
        try messages.map { try facade.prepare($0, dialect: "agora-silent", now: FacadeScenario.now) }
    }

    /// The batch sent in one write transaction (the synchronous send).
    static func sendInATransaction(_ facade: PushFacade, _ batch: [PushFacade.PreparedMessage]) throws -> [PushFacade.SendOutcome] {
        try facade.send(batch).map { try $0.get() }
    }

    @Test("a batch decides as the transaction's send does; its repeats, a kept group's too, come back byte for byte", arguments: FacadeScenario.Backing.allCases)
    func theSameOutcomesAsTheTransaction(_ backing: FacadeScenario.Backing) async throws {
        let (awaited, synchronous) = (try Self.scenario(backing), try Self.scenario(backing))
        let messages = [
            FacadeScenario.groupMessage(from: "u1", to: "g1", id: "g-1"),
            FacadeTests.directMessage(from: "u2", to: "u3", id: "d-1"),
            FacadeScenario.groupMessage(from: "u2", to: "g1", id: "g-2"),
            FacadeTests.directMessage(from: "u2", to: "u3", id: "d-1"),  // a repeat inside the batch
        ]
        let first = try await awaited.send(Self.prepare(awaited, messages)).map { try $0.get() }
        let expected = try Self.sendInATransaction(synchronous, Self.prepare(synchronous, messages))
        #expect(first == expected)
        #expect(first.map(\.isRepeat) == [false, false, false, true])
        #expect(first[2].decisions.first { $0.receiver == "u3" }?.decision.request?.badgeCounter == 3, "the second group message saw the batch's counters")
        if backing == .sqliteFile {
            let record = try awaited.store.read { try $0.sentMessage("g-2", since: FacadeScenario.now) }
            #expect(record?.starts(with: Array("PBR4".utf8)) == true, "a kept group's record refers to its roll")
        }
        // Sent again in a batch of their own: repeats, read with the records (and a kept group's roll).
        let again = try await awaited.send(Self.prepare(awaited, messages)).map { try $0.get() }
        #expect(again.allSatisfy(\.isRepeat) && again.map(\.decisions) == first.map(\.decisions))
        for user in ["u1", "u2", "u3", "u4"] {
            #expect(try awaited.user(user)?.state.badge == synchronous.user(user)?.state.badge, "\(user)'s counter")
        }
    }

    @Test("a send that requires an unknown target fails alone and changes nothing; the batch's others are sent", arguments: FacadeScenario.Backing.allCases)
    func requiredTargets(_ backing: FacadeScenario.Backing) async throws {
        let facade = try Self.scenario(backing)
        var batch = try Self.prepare(facade, [
            FacadeTests.directMessage(from: "u1", to: "u2", id: "known"),
            FacadeTests.directMessage(from: "u1", to: "nobody", id: "unknown"),
            FacadeScenario.groupMessage(from: "u1", to: "g9", id: "no-group"),
            FacadeScenario.groupMessage(from: "u1", to: "g1", id: "group"),
        ])
        batch[0].requiredTargets = [.user("u2")]
        batch[1].requiredTargets = [.user("nobody"), .user("u2"), .user("nobody")]
        batch[2].requiredTargets = [.group("g9")]
        batch[3].requiredTargets = [.group("g1")]
        let results = try await facade.send(batch)
        #expect(try results[0].get().decisions.map(\.receiver) == ["u2"])
        #expect(throws: PushFacade.UnknownTargets(targets: ["nobody"])) { try results[1].get() }
        #expect(throws: PushFacade.UnknownTargets(targets: ["g9"])) { try results[2].get() }
        #expect(try results[3].get().decisions.count == 3)
        #expect(try await facade.sentMessage("no-group", now: FacadeScenario.now) == nil)
        #expect(try await facade.sentMessage("unknown", now: FacadeScenario.now) == nil, "no record")
        #expect(try facade.knowsUser("nobody") == false && facade.groupExists("g9") == false, "a refused send creates no user or group")
        #expect(try facade.user("u2")?.state.badge == 2, "u2 counted once for the direct message and once for the group's")
    }

    @Test("the decision is handed a snapshot, never the store; a failed commit keeps nothing", arguments: FacadeScenario.Backing.allCases)
    func aFailedDecisionWritesNothing(_ backing: FacadeScenario.Backing) async throws {
        let store = try backing.store()
        try await PushFacade(store: store).configure(FacadeScenario.app)
        let calls = Mutex(0)
        var keys = StateKeys()
        keys.addApp()
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await store.update(reading: keys) { (snapshot: StateSnapshot) -> (changes: StateChanges, outcome: Int) in
                calls.withLock { $0 += 1 }
                #expect(snapshot.app == FacadeScenario.app)
                throw Refused()
            }
        }
        #expect(calls.withLock { $0 } >= 1)
        let outcome = try await store.update(reading: keys) { _ in (StateChanges(), 42) }
        #expect(outcome == 42)
    }

    @Test("calls applied as an update: the same states as in a transaction; a rejected batch writes nothing", arguments: FacadeScenario.Backing.allCases)
    func callsAsAnUpdate(_ backing: FacadeScenario.Backing) async throws {
        let (awaited, synchronous) = (PushFacade(store: try backing.store()), PushFacade(store: try backing.store()))
        func call(_ text: String, _ index: Int) -> PushFacade.DialectCall { .init(FacadeScenario.json(text), at: FacadeScenario.now, pointer: .root / index) }
        let calls = [
            call(#"{"call":"setAPNS","openPush":1}"#, 0),
            call(#"{"call":"modifySelfProfile","nick":"Alice"}"#, 1),
            call(#"{"call":"modifyGroupMemberInfoSetNameCard","groupId":"g1","user":"bob","nameCard":"Bobby"}"#, 2),
            call(#"{"call":"getAPNSConfig"}"#, 3),
        ]
        let results = try await awaited.apply(calls, dialect: "tencent-tim", user: "alice")
        #expect(try results == Self.applyInATransaction(synchronous, calls, user: "alice"))
        #expect(results[3] != nil && results[0] == nil)
        for user in ["alice", "bob"] {
            let (a, b) = (try awaited.user(user), try synchronous.user(user))
            #expect(a?.state == b?.state && a?.isConfigured == b?.isConfigured, "\(user)")
        }
        #expect(try awaited.user("bob")?.state.nameCards["g1"] == "Bobby")

        // A batch whose last call is rejected keeps nothing of the others, and names the pointer.
        let before = try awaited.user("alice")?.state
        let rejected = [call(#"{"call":"modifySelfProfile","nick":"Eve"}"#, 0), call(#"{"call":"modifyGroupMemberInfoSetNameCard","groupId":"g1","user":"","nameCard":"x"}"#, 1)]
        let error = try await #require(throws: InputError.self) { try await awaited.apply(rejected, dialect: "tencent-tim", user: "alice") }
        #expect(error.pointer.description == "/1/user")
        #expect(try awaited.user("alice")?.state == before)
    }

    static func applyInATransaction(_ facade: PushFacade, _ calls: [PushFacade.DialectCall], user: UserID) throws -> [JSONValue?] {
        try facade.apply(calls, dialect: "tencent-tim", user: user)
    }
}
