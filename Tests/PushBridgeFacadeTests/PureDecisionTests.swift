import PushBridgeCore
@testable import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore
import PushBridgeStoreTestSupport
import Testing

/// A send is read → decide → commit: the decision is a function of what was read (no store), and its
/// changes are a value the store then writes.
@Suite("Deciding without a store")
struct PureDecisionTests {
    @Test("a decision from hand-made reads equals the send through a store, and says what to write")
    func aDecisionNeedsNoStore() async throws {
        let facade = PushFacade(store: MemoryStateStore())
        try await facade.configure(FacadeScenario.app)
        try await FacadeScenario.register("u2", in: facade)
        let receiver = try #require(try await facade.user("u2")).state
        let message = FacadeTests.directMessage(from: "u1", to: "u2", id: "m1")
        let prepared = try facade.prepare(message, dialect: "agora-silent", now: FacadeScenario.now)

        // The reads, made by hand: the app, no known sender, one receiver under a key of our own.
        let key = UserKey(rawValue: 7)
        let reads = FreshMessageReads(
            app: FacadeScenario.app, sender: nil, groupPushOff: false,
            receivers: StoredReceivers([StoredReceiver(key: key, state: receiver, isConfigured: true)]))
        var effects = SendEffects()
        let decided = facade.decide(prepared, reads: .fresh(reads), after: &effects)
        let changes = effects.changes
        #expect(changes.badges.map(\.key) == [key] && changes.badges.map(\.badge) == [1])
        #expect(changes.records.map(\.id) == ["m1"] && changes.records.map(\.count) == [1])
        #expect(changes.deliveries.isEmpty, "a facade that queues no deliveries")

        // The same message through the store decides the same.
        #expect(try await facade.send(prepared) == decided)

        // A second message after it sees its counter, though nothing was written.
        let second = try facade.prepare(FacadeTests.directMessage(from: "u1", to: "u2", id: "m2"), dialect: "agora-silent", now: FacadeScenario.now)
        let next = facade.decide(second, reads: .fresh(reads), after: &effects)
        #expect(next.decisions[0].decision.request?.badgeCounter == 2)
        #expect(effects.changes.badges.map(\.badge) == [2] && effects.changes.records.map(\.id) == ["m1", "m2"])

        // A repeat read from the store changes nothing.
        var repeated = SendEffects()
        let again = facade.decide(prepared, reads: .repeated(decided.decisions), after: &repeated)
        #expect(again.isRepeat && again.decisions == decided.decisions && repeated.changes.isEmpty)
    }

    @Test("a batch names each key once: one read of the app, a sender and an audience for many messages")
    func aBatchNamesEachKeyOnce() throws {
        let facade = PushFacade(store: MemoryStateStore())
        var keys = StateKeys()
        let messages = try (1...5).map { i in
            try facade.prepare(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "m\(i)"), dialect: "agora-silent", now: FacadeScenario.now)
        }
        let planned = messages.map { PushFacade.plan($0, into: &keys) }
        #expect(keys.app && keys.senders.count == 1 && keys.groupProfiles == ["g1"] && keys.receivers.count == 1)
        #expect(Set(planned.map(\.receivers)) == [0] && Set(planned.map(\.sender)) == [0])
        let other = try facade.prepare(FacadeTests.directMessage(from: "u2", to: "u3", id: "d1"), dialect: "agora-silent", now: FacadeScenario.now)
        let third = PushFacade.plan(other, into: &keys)
        #expect(third.sender == 1 && third.receivers == 1 && third.groupProfile == nil && keys.groupProfiles == ["g1"])
    }
}
