import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

/// The facade's store path as a decision provider: each fixture is replayed into a fresh store
/// (`PushFacade.replay(_:profile:)`) and its queries are answered from that store.
///
/// `pushbridge conform --via-store` and the test suite use it to hold the store path to the
/// same fixtures as the in-memory engine.
public struct StoreDecisionProvider: DecisionProvider {
    /// Which store backs each replay.
    public enum Backing: String, Sendable, CaseIterable {
        /// A private in-memory SQLite database: the SQL, schema and row decoding all run.
        case sqlite
        /// `MemoryStateStore`, the in-memory twin.
        case memory
    }

    public let backing: Backing
    private let makeStore: @Sendable () async throws -> any PushStateStore

    public init(backing: Backing = .sqlite) {
        self.backing = backing
        switch backing {
        case .sqlite: makeStore = { try SQLiteStateStore(path: ":memory:") }
        case .memory: makeStore = { MemoryStateStore() }
        }
    }

    /// Replays into stores `makeStore` makes, one fresh store per fixture (another store
    /// implementation, such as PostgreSQL's, without this library depending on it).
    /// - Parameter makeStore: a new, empty store.
    public init(makeStore: @escaping @Sendable () async throws -> any PushStateStore) {
        backing = .sqlite
        self.makeStore = makeStore
    }

    func facade() async throws -> PushFacade { PushFacade(store: try await makeStore()) }

    public func decision(for fixture: Fixture, profile: Profile?) async throws -> [UInt8] {
        try await facade().replay(fixture.scenario, profile: profile).json
    }

    public func queryResults(for fixture: Fixture) async throws -> [JSONValue]? {
        let queries = fixture.expectedQueries
        if queries.isEmpty { return [] }
        let scenario = fixture.scenario
        let facade = try await facade()
        _ = try await facade.replay(scenario)
        var results: [JSONValue] = []
        for (query, _, pointer) in queries {
            let request = try ScenarioEngine.queryRequest(query, at: pointer)
            results.append(
                try await facade.query(
                    request.call, dialect: request.dialect ?? scenario.dialect, user: request.user ?? scenario.receiver.user, now: scenario.now,
                    pointer: pointer))
        }
        return results
    }
}
