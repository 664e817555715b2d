import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// How many statements (each a round trip to the server) a send costs on
/// PostgreSQL, counted by the pool, so a change that adds round trips fails here and not only in a
/// benchmark on a quiet machine.
@Suite("PostgreSQL round trips")
struct PostgresRoundTripTests {
    /// A facade on a store of a new schema with its own pool; u1 and u2 each with a device.
    static func scenario() async throws -> (PushFacade, PostgresStateStore)? {
        guard let url = testPostgresURL() else { return nil }
        let location = try freshPostgresSchema(url)
        let store = try await PostgresStateStore.open(location: location, app: "", pool: PostgresConnections(location: location, limit: 4, logger: .init(label: "test"), runsItself: true))
        let facade = PushFacade(store: store, queuesDeliveries: true)
        try await facade.configure(FacadeScenario.app)
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: facade) }
        return (facade, store)
    }

    static func oneToOne(_ id: String) -> JSONValue {
        FacadeScenario.json(#"{"id":"\#(id)","conversationId":"u2","from":"u1","to":"u2","chatType":"Chat","body":{"type":"text","text":"hi"}}"#)
    }

    /// Statements sent while `body` runs.
    static func statements(_ store: PostgresStateStore, _ body: () throws -> Void) rethrows -> Int {
        let before = store.pool.statements.value
        try body()
        return store.pool.statements.value - before
    }

    /// Statements sent while `body` runs, awaited.
    static func statements(_ store: PostgresStateStore, _ body: () async throws -> Void) async rethrows -> Int {
        let before = store.pool.statements.value
        try await body()
        return store.pool.statements.value - before
    }

    @Test("a warm one-to-one send's round trips: one, alone or eight in one update; under the lock four, whatever the batch")
    func oneToOneSendRoundTrips() async throws {
        guard let (facade, store) = try await Self.scenario() else { return }
        let prepare = { (id: String) in try facade.prepare(Self.oneToOne(id), dialect: "agora-silent", now: FacadeScenario.now) }
        _ = try await facade.send(try prepare("warm"))
        // Warm on one node: the sender, the receiver and the configuration are kept, the ids assumed
        // unsent: one call of the commit function checks what was read and writes the effects.
        let one = try prepare("one")
        let alone = try await Self.statements(store) { _ = try await facade.send([one]) }
        let eight = try (0..<8).map { try prepare("eight-\($0)") }
        let batch = try await Self.statements(store) { _ = try await facade.send(eight) }
        #expect(alone == 1, "a warm send alone: \(alone) statements")
        #expect(batch == 1, "eight warm sends in one update: \(batch) statements")
        // Under the write lock (after a commit found a change): BEGIN, the lock (versions, the badge
        // log's ends and the ids' records), the effects (counters, outbox, records: one statement), COMMIT.
        store.oneRoundTrip.changed()
        let locked = try prepare("locked")
        let lockedAlone = try await Self.statements(store) { _ = try await facade.send([locked]) }
        store.oneRoundTrip.changed()
        let lockedEight = try (0..<8).map { try prepare("locked-\($0)") }
        let lockedBatch = try await Self.statements(store) { _ = try await facade.send(lockedEight) }
        #expect(lockedAlone <= 4, "under the lock, alone: \(lockedAlone) statements")
        #expect(lockedBatch <= 4, "under the lock, eight: \(lockedBatch) statements")
        await #expect(try facade.user("u2")?.state.badge == 1 + 1 + 8 + 1 + 8)
    }

    /// The app's configuration a node keeps between sends is checked by its version: a change made on
    /// another node is used by this node's next send, and one rolled back is not.
    @Test("a configuration changed on another node is used by the next send; one rolled back is not")
    func keptConfigurationFollowsOtherNodes() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try freshPostgresSchema(url)
        let a = PushFacade(store: try await PostgresStateStore.open(location: location))
        let bStore = try await PostgresStateStore.open(location: location)
        let b = PushFacade(store: bStore)
        func configure(_ facade: PushFacade, _ pattern: String) async throws {
            var app = FacadeScenario.app
            app.templates = [PushTemplate(name: "plain", titlePattern: nil, contentPattern: pattern)]
            try await facade.configure(app)
        }
        try await configure(a, "Old {0}")
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: a) }
        func body(_ id: String) async throws -> String {
            let message = FacadeScenario.json(
                #"{"id":"\#(id)","conversationId":"u2","from":"u1","to":"u2","chatType":"Chat","body":{"type":"text","text":"hi"},"ext":{"em_push_template":{"name":"plain","content_args":["Ann"]}}}"#)
            let decisions = try await b.send(message, dialect: "agora-silent", now: FacadeScenario.now)
            return decisions.first?.decision.request?.payloadText ?? "no push"
        }
        await #expect(try body("m1").contains("Old Ann"))
        await #expect(try body("m2").contains("Old Ann"))  // kept: no template read (counted below)
        let kept = try await Self.statements(bStore) { _ = try await body("m3") }
        try await configure(a, "New {0}")
        await #expect(try body("m4").contains("New Ann"), "node b uses node a's change")
        // A change rolled back on node b itself leaves the configuration as it was.
        struct Abandoned: Error {}
        await #expect(throws: Abandoned.self) {
            try await bStore.writing { transaction in
                var app = FacadeScenario.app
                app.templates = [PushTemplate(name: "plain", titlePattern: nil, contentPattern: "Abandoned {0}")]
                try await transaction.setApp(app)
                throw Abandoned()
            }
        }
        await #expect(try body("m5").contains("New Ann"))
        #expect(kept <= 9, "a send with the configuration kept: \(kept) statements")
    }
}
