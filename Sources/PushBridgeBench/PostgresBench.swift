// `make bench-postgres`: several nodes on one PostgreSQL (issue 19). In one run, on a throwaway
// cluster that Tests/Scripts/with-postgres.sh starts: one-to-one messages/s through one node and
// through two nodes at once (wrk), and the 100,000-member fan-out on PostgreSQL beside SQLite's.
import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Hummingbird
import Logging
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeServer
import PushBridgeStore
import ServiceLifecycle

/// Runs SQL through psql (set-up only: bulk rows the store's API would write one by one).
func psql(_ url: String, _ sql: String) {
    _ = runLoadTool(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], package: "postgresql-client")
}

/// The whole PostgreSQL benchmark; prints a table and one JSON line.
func runPostgresBench(seconds runSeconds: Int, members: Int) async throws {
    guard let url = ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"] else {
        fail("no PostgreSQL: run it as `make bench-postgres` (Tests/Scripts/with-postgres.sh starts a throwaway cluster)")
    }
    let base = try PostgresLocation(url: url)
    let now = Instant(iso8601: "2026-03-02T09:15:00Z")!
    let certificate = Certificate(name: "agoraTest", busiId: nil, bundleId: "io.agora.chatdemo", environment: .production)
    func group(_ id: String) throws -> JSONValue {
        try JSONParser.parse(
            #"{"id":"\#(id)","conversationId":"big","from":"user-0","to":"big","chatType":"GroupChat","body":{"type":"text","text":"Standup in 5 minutes"}}"#)
    }

    // 1. The fan-out: the same members on SQLite and on PostgreSQL, three sends each (the first cold).
    let schema = "bench_fanout"
    let fanoutStore = try PostgresStateStore(location: try base.inSchema(schema))
    try PushFacade(store: fanoutStore).configure(AppConfiguration(certificates: [certificate]))
    let schemaURL = url
    psql(schemaURL, """
        SET search_path TO \(schema);
        INSERT INTO users (name, configured) SELECT 'user-' || i, true FROM generate_series(0, \(members - 1)) i;
        INSERT INTO devices (token, user_id, certificate_id, bound_at) SELECT lpad(to_hex(u.id), 64, '0'), u.id, (SELECT min(id) FROM certificates), 0 FROM users u;
        INSERT INTO members (group_id, position, user_id) SELECT 'big', row_number() OVER (ORDER BY id) - 1, id FROM users;
        ANALYZE;
        """)
    var postgresMilliseconds: [Double] = []
    let postgresFacade = PushFacade(store: try PostgresStateStore(location: try base.inSchema(schema)))
    for round in 0..<3 {
        let start = ContinuousClock.now
        let decisions = try postgresFacade.send(try group("p\(round)"), dialect: "agora-silent", now: now)
        postgresMilliseconds.append(seconds(ContinuousClock.now - start) * 1000)
        if decisions.count != members - 1 { fail("PostgreSQL fan-out decided \(decisions.count) receivers") }
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-pg-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let sqlite = try SQLiteStateStore(path: folder.appendingPathComponent("state.db").path)
    let sqliteFacade = PushFacade(store: sqlite)
    try sqliteFacade.configure(AppConfiguration(certificates: [certificate]))
    try sqlite.write { transaction in
        for i in 0..<members {
            var state = UserState(user: "user-\(i)", displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
            state.devices = [Device(token: String(format: "%064x", i + 1), certificate: certificate)]
            try transaction.save(state, replacing: nil)
        }
    }
    try sqliteFacade.setMembers((0..<members).map { "user-\($0)" }, of: "big")
    var sqliteMilliseconds: [Double] = []
    for round in 0..<3 {
        let start = ContinuousClock.now
        _ = try sqliteFacade.send(try group("s\(round)"), dialect: "agora-silent", now: now)
        sqliteMilliseconds.append(seconds(ContinuousClock.now - start) * 1000)
    }

    // 2. One-to-one messages through one node, then through two nodes at once.
    let key = AccessKey.generate()
    var configuration = ServiceConfiguration(host: "127.0.0.1", port: 0, database: folder.path, logLevel: .warning)
    configuration.postgres = try base.inSchema("bench_service")
    configuration.requestTimeoutSeconds = 30
    _ = try PostgresAppDirectory(location: try base.inSchema("bench_service")).register(
        RegisteredApp(id: "bench", keyHash: AccessKey.hash(key), createdAt: Instant(milliseconds: 0)))
    var nodes: [(PortBox, ServiceGroup)] = []
    for _ in 0..<2 {
        let port = PortBox()
        let service = try PushBridgeService(configuration: configuration)
        nodes.append((port, try await start(service.application { port.set($0.localAddress?.port ?? 0) }, port: port)))
    }
    // The receiver u1 with a device, registered through node 1 (u0 sends to u1).
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    for (method, path, body) in [
        (HTTPMethod.PUT, "", #"{"certificates":[{"name":"agoraTest","bundleId":"io.agora.chatdemo","environment":"production"}]}"#),
        (.POST, "/users/u1/calls?dialect=agora-silent",
         #"[{"call":"initializeSDK","appkey":"1#1","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de"}]"#),
    ] {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(nodes[0].0.value)/v1/apps/bench" + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: body))
        let answer = try await client.execute(request, timeout: .seconds(30))
        if answer.status.code != 200 { fail("setting up the benchmark's app: \(method) \(path) answered \(answer.status)") }
    }
    try await client.shutdown()
    let oneToOne = #"{"id":"%ID%","conversationId":"u1","from":"u0","to":"u1","chatType":"Chat","body":{"type":"text","text":"hello"}}"#
    func messages(_ node: Int) -> String { "http://127.0.0.1:\(nodes[node].0.value)/v1/apps/bench/messages?dialect=agora-silent" }
    _ = wrk(url: messages(0), body: oneToOne, connections: 8, seconds: 1, key: key)  // warm-up
    let single = wrk(url: messages(0), body: oneToOne, connections: 32, seconds: runSeconds, key: key)
    let (url0, url1) = (messages(0), messages(1))
    // wrk blocks its thread while it runs: give each its own thread, not one of the (two, on two
    // cores) cooperative threads the nodes' request handlers need.
    func wrkOnItsOwnThread(_ url: String) async -> WrkFigures {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: wrk(url: url, body: oneToOne, connections: 32, seconds: runSeconds, key: key)) }
        }
    }
    async let first = wrkOnItsOwnThread(url0)
    async let second = wrkOnItsOwnThread(url1)
    let (x, y) = await (first, second)
    for (_, group) in nodes { await group.triggerGracefulShutdown() }
    let non2xx = single.non2xx + x.non2xx + y.non2xx
    let both = x.requestsPerSecond + y.requestsPerSecond

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print("pushbridge-bench --postgres: PostgreSQL (throwaway cluster, fsync off, loopback) and SQLite on this machine, one run")
    print(String(format: "fan-out to %d members, PostgreSQL: first %.0f ms, then %.0f / %.0f ms", members, postgresMilliseconds[0], postgresMilliseconds[1], postgresMilliseconds[2]))
    print(String(format: "fan-out to %d members, SQLite:     first %.0f ms, then %.0f / %.0f ms (PostgreSQL takes %.1f× as long, warm median)", members,
        sqliteMilliseconds[0], sqliteMilliseconds[1], sqliteMilliseconds[2], median(Array(postgresMilliseconds.dropFirst())) / median(Array(sqliteMilliseconds.dropFirst()))))
    print(String(format: "one-to-one messages, one node (32 connections):   %8.0f/s  p99 %6.2f ms", single.requestsPerSecond, single.p99ms))
    print(String(format: "one-to-one messages, two nodes (32 connections each): %8.0f/s  p99 %6.2f / %6.2f ms (%.2f× one node; writes to one app are serialised)",
        both, x.p99ms, y.p99ms, both / single.requestsPerSecond))
    var w = JSONWriter()
    w.write(.object(JSONObject([
        ("fanout_members", .int(Int64(members))),
        ("postgres_fanout_ms", .array(postgresMilliseconds.map { .double($0.rounded()) })), ("sqlite_fanout_ms", .array(sqliteMilliseconds.map { .double($0.rounded()) })),
        ("one_node_rps", .double(single.requestsPerSecond.rounded())), ("two_nodes_rps", .double(both.rounded())), ("non_2xx", .int(Int64(non2xx))),
    ])))
    print(w.string)
    if non2xx > 0 { fail("the nodes answered non-2xx responses under load") }
}
