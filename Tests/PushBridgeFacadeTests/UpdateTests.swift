import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// A batch as one update: the store reads what the batch names, the facade decides, the store commits
/// (``PushStateStore/update(reading:deciding:)``) — the same outcomes as its messages one by one, on
/// every store.
@Suite("Sending as an update")
struct UpdateTests {
    /// A facade over `backing` with users u1…u4 registered and a group g1 of all four.
    static func scenario(_ backing: FacadeScenario.Backing) async throws -> PushFacade {
        let facade = await PushFacade(store: try backing.store())
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2", "u3", "u4"] { try await FacadeScenario.register(user, in: facade) }
        try await facade.setMembers(["u1", "u2", "u3", "u4"], of: "g1")
        return facade
    }

    static func prepare(_ facade: PushFacade, _ messages: [JSONValue]) throws -> [PushFacade.PreparedMessage] {
        try messages.map { try facade.prepare($0, dialect: "agora-silent", now: FacadeScenario.now) }
    }

    /// The batch's messages sent one update each, in order.
    static func sendOneByOne(_ facade: PushFacade, _ batch: [PushFacade.PreparedMessage]) async throws -> [PushFacade.SendOutcome] {
        var outcomes: [PushFacade.SendOutcome] = []
        for message in batch { outcomes.append(try await facade.send(message)) }
        return outcomes
    }

    @Test("a batch decides as its messages sent one by one do; its repeats, a kept group's too, come back byte for byte", arguments: FacadeScenario.Backing.allCases)
    func theSameOutcomesAsTheTransaction(_ backing: FacadeScenario.Backing) async throws {
        let (together, oneByOne) = await (try Self.scenario(backing), try Self.scenario(backing))
        let messages = [
            FacadeScenario.groupMessage(from: "u1", to: "g1", id: "g-1"),
            FacadeTests.directMessage(from: "u2", to: "u3", id: "d-1"),
            FacadeScenario.groupMessage(from: "u2", to: "g1", id: "g-2"),
            FacadeTests.directMessage(from: "u2", to: "u3", id: "d-1"),  // a repeat inside the batch
        ]
        let first = try await together.send(Self.prepare(together, messages)).map { try $0.get() }
        let expected = try await Self.sendOneByOne(oneByOne, Self.prepare(oneByOne, messages))
        #expect(first == expected)
        #expect(first.map(\.isRepeat) == [false, false, false, true])
        #expect(first[2].decisions.first { $0.receiver == "u3" }?.decision.request?.badgeCounter == 3, "the second group message saw the batch's counters")
        if backing == .sqliteFile {
            let record = try await together.store.records([("g-2", FacadeScenario.now)])[0]
            #expect(record?.starts(with: Array("PBR4".utf8)) == true, "a kept group's record refers to its roll")
        }
        // Sent again in a batch of their own: repeats, read with the records (and a kept group's roll).
        let again = try await together.send(Self.prepare(together, messages)).map { try $0.get() }
        #expect(again.allSatisfy(\.isRepeat) && again.map(\.decisions) == first.map(\.decisions))
        for user in ["u1", "u2", "u3", "u4"] {
            await #expect(try together.user(user)?.state.badge == oneByOne.user(user)?.state.badge, "\(user)'s counter")
        }
    }

    @Test("a send that requires an unknown target fails alone and changes nothing; the batch's others are sent", arguments: FacadeScenario.Backing.allCases)
    func requiredTargets(_ backing: FacadeScenario.Backing) async throws {
        let facade = try await Self.scenario(backing)
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
        #expect(try await facade.knowsUser("nobody") == false, "a refused send creates no user or group")
        #expect(try await facade.groupExists("g9") == false, "a refused send creates no user or group")
        await #expect(try facade.user("u2")?.state.badge == 2, "u2 counted once for the direct message and once for the group's")
    }

    @Test("the decision is handed a snapshot, never the store; a failed commit keeps nothing", arguments: FacadeScenario.Backing.allCases)
    func aFailedDecisionWritesNothing(_ backing: FacadeScenario.Backing) async throws {
        let store = try await backing.store()
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

    @Test("calls applied together: the same states as one by one; a rejected batch writes nothing", arguments: FacadeScenario.Backing.allCases)
    func callsAsAnUpdate(_ backing: FacadeScenario.Backing) async throws {
        let (together, oneByOne) = await (PushFacade(store: try backing.store()), PushFacade(store: try backing.store()))
        func call(_ text: String, _ index: Int) -> PushFacade.DialectCall { .init(FacadeScenario.json(text), at: FacadeScenario.now, pointer: .root / index) }
        let calls = [
            call(#"{"call":"setAPNS","openPush":1}"#, 0),
            call(#"{"call":"modifySelfProfile","nick":"Alice"}"#, 1),
            call(#"{"call":"modifyGroupMemberInfoSetNameCard","groupId":"g1","user":"bob","nameCard":"Bobby"}"#, 2),
            call(#"{"call":"getAPNSConfig"}"#, 3),
        ]
        let results = try await together.apply(calls, dialect: "tencent-tim", user: "alice")
        await #expect(try results == Self.applyOneByOne(oneByOne, calls, user: "alice"))
        #expect(results[3] != nil && results[0] == nil)
        for user in ["alice", "bob"] {
            let (a, b) = await (try together.user(user), try oneByOne.user(user))
            #expect(a?.state == b?.state && a?.isConfigured == b?.isConfigured, "\(user)")
        }
        await #expect(try together.user("bob")?.state.nameCards["g1"] == "Bobby")

        // A batch whose last call is rejected keeps nothing of the others, and names the pointer.
        let before = try await together.user("alice")?.state
        let rejected = [call(#"{"call":"modifySelfProfile","nick":"Eve"}"#, 0), call(#"{"call":"modifyGroupMemberInfoSetNameCard","groupId":"g1","user":"","nameCard":"x"}"#, 1)]
        let error = try await #require(throws: InputError.self) { try await together.apply(rejected, dialect: "tencent-tim", user: "alice") }
        #expect(error.pointer.description == "/1/user")
        await #expect(try together.user("alice")?.state == before)
    }

    /// The calls applied one update each, in order.
    static func applyOneByOne(_ facade: PushFacade, _ calls: [PushFacade.DialectCall], user: UserID) async throws -> [JSONValue?] {
        var results: [JSONValue?] = []
        for item in calls { results.append(try await facade.apply(item.call, dialect: "tencent-tim", user: user, at: item.at, pointer: item.pointer)) }
        return results
    }
}
