import Foundation
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgePostgres
import PushBridgeStore
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// The apps of a database share its tables: a database a 0.36.1 service made (an app a schema,
/// `Tests/Data/postgres-0.36.1.sql`, made by `Tests/Scripts/make-postgres-fixture.sh`) moves in as each
/// app first opens, on one node or two at once, and the apps' rows stay apart.
@Suite("PostgreSQL tables shared by the apps")
struct PostgresSharedTablesTests {
    /// A new database holding the 0.36.1 fixture: apps `demo` and `other`, each with u1, u2 (two
    /// devices), u3, group g1 of the three and message m-1 sent by u1 to g1; `demo` also m-2, so its
    /// u2 counts 2 and `other`'s 1.
    static func oldDatabase(_ url: String) async throws -> PostgresLocation {
        let location = try await freshPostgresDatabase(url)
        let run = try runProgram("/usr/bin/env", [
            "psql", "-q", "-v", "ON_ERROR_STOP=1", "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)",
            "-f", GoldenFile.path("postgres-0.36.1.sql"),
        ])
        try #require(run.status == 0, "\(run.stderr)")
        return location
    }

    static func psql(_ location: PostgresLocation, _ sql: String) throws -> String {
        let run = try runProgram("/usr/bin/env", ["psql", "-At", "-v", "ON_ERROR_STOP=1", "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)", "-c", sql])
        #expect(run.status == 0, "\(run.stderr)")
        return run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    static func message(_ id: String) -> JSONValue {
        FacadeScenario.json(#"{"id":"\#(id)","conversationId":"g1","from":"u1","to":"g1","chatType":"GroupChat","body":{"type":"text","text":"lunch?"}}"#)
    }

    /// What the fixture holds for `app`, read through the store, then a send and a new group.
    static func checkMovedIn(_ store: any PushStateStore, app: String, badge: Int) async throws {
        let facade = PushFacade(store: store, repeatWindowSeconds: 100 * 365 * 86_400, queuesDeliveries: true)  // the fixture's sends stay repeats
        let u2 = try #require(try await facade.user("u2"), "\(app): u2 moved in")
        #expect(u2.state.badge == badge && u2.state.devices.count == 2 && u2.isConfigured, "\(app): \(u2)")
        #expect(try await facade.members(of: "g1") == ["u1", "u2", "u3"], "\(app)")
        let repeated = try await facade.sendMessage(Self.message("m-1"), dialect: "agora-silent", now: Instant.now)
        #expect(repeated.isRepeat && repeated.decisions.first { $0.receiver == "u2" }?.decision.request?.badgeCounter == 1, "\(app): m-1's record moved in")
        let sent = try await facade.send(Self.message("m-3-\(app)"), dialect: "agora-silent", now: Instant.now)
        #expect(sent.first { $0.receiver == "u2" }?.decision.request?.badgeCounter == badge + 1, "\(app) counts on from its own counter")
        #expect(try await facade.deliveries(ofMessage: "m-3-\(app)").count == 2, "\(app): u2's two devices queued")
        // New rows take ids past every id moved in (the keys are the app and the id).
        try await facade.setMembers(["u9", "u1"], of: "g9")
        #expect(try await facade.members(of: "g9") == ["u9", "u1"])
    }

    @Test("a 0.36.1 database moves into the shared tables as each app first opens; every row stays its app's")
    func oldDatabaseMovesIn() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await Self.oldDatabase(url)
        #expect(try Self.psql(location, "SELECT string_agg(nspname, ',' ORDER BY nspname) FROM pg_namespace WHERE nspname LIKE 'app\\_%'")
            == "app_demo_2a97516c,app_other_d9298a10")
        let node = try PostgresServiceStorage(location: location, connections: 4)
        let run = Task { await node.run() }
        defer { run.cancel() }
        #expect(try await node.openDirectory().apps().map(\.id).sorted() == ["demo", "other"])
        try await Self.checkMovedIn(try await node.openStoreAwaited(forApp: "demo"), app: "demo", badge: 2)
        #expect(try Self.psql(location, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'app\\_%'") == "1", "demo's schema dropped, other's not yet")
        try await Self.checkMovedIn(try await node.openStoreAwaited(forApp: "other"), app: "other", badge: 1)
        #expect(try Self.psql(location, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'app\\_%'") == "0")
        #expect(try Self.psql(location, "SELECT string_agg(a.id || ':' || count, ',' ORDER BY a.id) FROM pushbridge_apps.apps a JOIN (SELECT app, count(*) FROM pushbridge_apps.users GROUP BY app) u ON u.app = a.key")
            == "demo:4,other:4", "u1, u2, u3 and u9 an app")
        // Opened again (a restart), nothing moves twice.
        let again = try PostgresServiceStorage(location: location, connections: 2)
        let runAgain = Task { await again.run() }
        defer { runAgain.cancel() }
        #expect(try await PushFacade(store: try await again.openStoreAwaited(forApp: "demo")).user("u2")?.state.badge == 3)
    }

    @Test("two nodes opening an app of a 0.36.1 database at once move it once")
    func twoNodesMoveItOnce() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await Self.oldDatabase(url)
        let (a, b) = (try PostgresServiceStorage(location: location, connections: 4), try PostgresServiceStorage(location: location, connections: 4))
        let runs = [Task { await a.run() }, Task { await b.run() }]
        defer { for run in runs { run.cancel() } }
        async let onA = a.openStoreAwaited(forApp: "demo")
        async let onB = b.openStoreAwaited(forApp: "demo")
        let (storeA, storeB) = try await (onA, onB)
        #expect(try await PushFacade(store: storeA).user("u2")?.state.badge == 2)
        #expect(try await PushFacade(store: storeB).user("u2")?.state.badge == 2)
        #expect(try Self.psql(location, "SELECT count(*) FROM pushbridge_apps.users u JOIN pushbridge_apps.apps a ON a.key = u.app WHERE a.id = 'demo'") == "3")
        let sent = try await PushFacade(store: storeB, queuesDeliveries: true).send(Self.message("m-4"), dialect: "agora-silent", now: Instant.now)
        #expect(sent.first { $0.receiver == "u2" }?.decision.request?.badgeCounter == 3)
        #expect(try await PushFacade(store: storeA).user("u2")?.state.badge == 3, "node A reads node B's count")
    }

    @Test("two apps in the shared tables see none of each other's rows: users, groups, messages, outbox, labels, attributes, tasks")
    func appsSeeOnlyTheirOwnRows() async throws {
        guard let url = testPostgresURL() else { return }
        let node = try PostgresServiceStorage(location: try await freshPostgresDatabase(url), connections: 4)
        let run = Task { await node.run() }
        defer { run.cancel() }
        let a = PushFacade(store: try await node.openStoreAwaited(forApp: "a"), queuesDeliveries: true)
        let b = PushFacade(store: try await node.openStoreAwaited(forApp: "b"), queuesDeliveries: true)
        let now = FacadeScenario.now
        try await a.configure(FacadeScenario.app)
        for user in ["u1", "u2"] { try await FacadeScenario.register(user, in: a) }
        try await a.setMembers(["u1", "u2"], of: "g1")
        _ = try await a.send(FacadeScenario.groupMessage(from: "u1", to: "g1", id: "m1"), dialect: "agora-silent", now: now)
        _ = try await a.createLabel(PushLabel(key: "vip", name: "vip", description: "", createdAt: now))
        _ = try await a.addUsers(["u2"], toLabel: "vip", named: "vip", at: now)
        try await a.nameAttributes([(slot: 0, name: "city")])
        try await a.setAttributes([(user: "u2", values: [UserAttribute(name: "city", value: "x")])])
        _ = try await a.createTask(
            PushTask(id: 7, family: "native", audience: TaskAudience(all: ["vip"]), request: [1], createdAt: now, startAt: now),
            labelNames: nil, limit: 10, windowSeconds: 86_400)
        // App b, new, sees nothing of a's.
        #expect(try await b.user("u2") == nil)
        #expect(try await b.user("u1") == nil)
        #expect(try await b.members(of: "g1").isEmpty)
        #expect(try await b.groups().isEmpty)
        #expect(try await b.deliveries(ofMessage: "m1").isEmpty)
        #expect(try await b.outboxCounts() == OutboxCounts(queued: 0, delivered: 0, failed: 0))
        #expect(try await b.labels(after: nil, limit: 10).isEmpty)
        #expect(try await b.label("vip") == nil)
        #expect(try await b.attributeNames().isEmpty)
        #expect(try await b.tasks(.recent(limit: 10)).isEmpty)
        #expect(try await b.taskStatus(7) == nil)
        // The same names in b are b's own: a's rows do not move.
        try await b.configure(FacadeScenario.app)
        for user in ["u2", "u3"] { try await FacadeScenario.register(user, in: b) }
        try await b.setMembers(["u3", "u2"], of: "g1")
        let sent = try await b.sendMessage(FacadeScenario.groupMessage(from: "u3", to: "g1", id: "m1"), dialect: "agora-silent", now: now)
        #expect(!sent.isRepeat)
        #expect(sent.decisions.first { $0.receiver == "u2" }?.decision.request?.badgeCounter == 1)
        _ = try await b.createLabel(PushLabel(key: "vip", name: "vip", description: "", createdAt: now))
        _ = try await b.addUsers(["u3"], toLabel: "vip", named: "vip", at: now)
        #expect(try await a.members(of: "g1") == ["u1", "u2"])
        #expect(try await b.members(of: "g1") == ["u3", "u2"])
        #expect(try await a.user("u2")?.state.badge == 1)
        #expect(try await a.user("u3") == nil)
        #expect(try await a.labelUsers("vip", named: "vip", after: nil, limit: 10).map(\.user) == ["u2"])
        #expect(try await b.labelUsers("vip", named: "vip", after: nil, limit: 10).map(\.user) == ["u3"])
        #expect(try await a.nextReceivers(of: 7, limit: 10)?.receivers == ["u2"], "a's task reads a's label")
        #expect(try await a.attributes(of: ["u2"]) == [[UserAttribute(name: "city", value: "x")]])
        #expect(try await b.attributes(of: ["u2"]) == [[]])
        #expect(try await a.deliveries(ofMessage: "m1").count == 1)
        #expect(try await b.deliveries(ofMessage: "m1").count == 1)
    }
}
