import PushBridgeConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Every fixture also runs through the facade's store path (apply the setup calls, set the group,
/// send the message), on SQLite and on its in-memory twin, and must give the engine's decision.
@Suite("Store path")
struct StorePathTests {
    @Test("fixture passes through the store", arguments: Repository.fixtureFiles(), StoreDecisionProvider.Backing.allCases)
    func fixturePassesThroughTheStore(_ file: String, backing: StoreDecisionProvider.Backing) async {
        let runner = ConformanceRunner(provider: StoreDecisionProvider(backing: backing))
        let result = await Self.replays.withPlace { await runner.run(file: Repository.root.appendingPathComponent(file).path) }
        #expect(result.passed, "\(file) via \(backing)\n\(result.failure?.description ?? "")")
    }

    /// Replays on SQLite and the memory twin at once, at most: they only compute, and hundreds of them
    /// queued together would keep every other test's awaited work (a server's answer, a worker's next
    /// delivery) waiting behind them for longer than the deadlines those tests run with.
    static let replays = AsyncLimiter(2)

    /// Fixtures replayed into PostgreSQL at once, at most: each opens stores with connections of their own,
    /// and the test cluster's `max_connections` is shared with every other test.
    static let postgresReplays = AsyncLimiter(3)

    @Test("fixture passes through the PostgreSQL store", arguments: Repository.fixtureFiles())
    func fixturePassesThroughPostgres(_ file: String) async throws {
        guard let url = testPostgresURL() else { return }
        let schemas = PostgresSchemas(url)
        let result = await Self.postgresReplays.withPlace {
            await ConformanceRunner(provider: StoreDecisionProvider(makeStore: { try await PostgresStateStore.open(location: try schemas.fresh()) }))
                .run(file: Repository.root.appendingPathComponent(file).path)
        }
        #expect(result.passed, "\(file) via PostgreSQL\n\(result.failure?.description ?? "")")
        try schemas.dropAll()
    }

    @Test("store decision equals the engine's in every profile", arguments: Repository.fixtureFiles(under: "easemob-legacy")
        + Repository.fixtureFiles(under: "agora-silent") + Repository.fixtureFiles(under: "tencent-tim"))
    func storeDecisionEqualsEngine(_ file: String) async throws {
        let fixture = try Fixture(path: Repository.root.appendingPathComponent(file).path)
        let compared = try await Self.replays.withPlace {
            var compared: [(profile: String, engine: String, stored: String)] = []
            for profile in Profile.builtIn {
                let engine = try ScenarioEngine().decide(fixture.scenario, profile: profile)
                let stored = try await PushFacade(store: try SQLiteStateStore(path: ":memory:")).replay(fixture.scenario, profile: profile)
                compared.append((profile.id, engine.jsonText, stored.jsonText))
            }
            return compared
        }
        for (profile, engine, stored) in compared {
            #expect(stored == engine, "\(file) with \(profile)")
        }
    }
}
