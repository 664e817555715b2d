// `make bench-postgres`: several nodes on one PostgreSQL. In one run, on a throwaway
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
import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PostgresNIO
import PushBridgeStore
import ServiceLifecycle

/// Runs SQL through psql (set-up only: bulk rows the store's API would write one by one).
func psql(_ url: String, _ sql: String) {
    _ = runLoadTool(["psql", "-q", "-v", "ON_ERROR_STOP=1", url, "-c", sql], package: "postgresql-client")
}

/// One wrk client of a load shape: its URL and key, its connections, and the apps' paths and keys its
/// requests go to in turn (empty: the URL's alone).
struct LoadRun {
    var url: String
    var key: String
    var connections: Int
    var apps: [(path: String, key: String)] = []

    init(_ url: String, _ key: String, _ connections: Int, apps: [(path: String, key: String)] = []) {
        (self.url, self.key, self.connections, self.apps) = (url, key, connections, apps)
    }
}

/// The whole PostgreSQL benchmark; prints a table and one JSON line.
func runPostgresBench(seconds runSeconds: Int, members: Int, onlyFanOut: Bool = false) async throws {
    guard let url = ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"] else {
        fail("no PostgreSQL: run it as `make bench-postgres` (Tests/Scripts/with-postgres.sh starts a throwaway cluster)")
    }
    // PUSHBRIDGE_BENCH_ONLY: one load shape alone (for a profiler), one app's two, or one app and 8 apps
    // alternated on each store (apps-pairs).
    let shapeNames = ["eight-apps", "eight-apps-two-nodes", "one-app-one-node", "one-app-two-nodes", "one-app-one-node-spread", "one-app-two-nodes-spread", "sqlite-eight-apps", "sqlite-one-app"]
    let only = ProcessInfo.processInfo.environment["PUSHBRIDGE_BENCH_ONLY"]
    if let only, !onlyFanOut, !(shapeNames + ["one-app", "apps-pairs"]).contains(only) {
        fail("PUSHBRIDGE_BENCH_ONLY=\(only) is no load shape of --postgres; one of: \(shapeNames.joined(separator: ", ")), one-app, apps-pairs")
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
    let fanoutStore = try await PostgresStateStore.open(location: try base.inSchema(schema))
    try await PushFacade(store: fanoutStore).configure(AppConfiguration(certificates: [certificate]))
    let schemaURL = url
    psql(schemaURL, """
        SET search_path TO \(schema);
        INSERT INTO users (app, name, configured) SELECT 1, 'user-' || i, true FROM generate_series(0, \(members - 1)) i;
        INSERT INTO devices (app, token, user_id, certificate_id, bound_at)
            SELECT 1, lpad(to_hex(u.id), 64, '0'), u.id, (SELECT min(id) FROM certificates WHERE app = 1), 0 FROM users u WHERE u.app = 1;
        INSERT INTO members (app, group_id, position, user_id) SELECT 1, 'big', row_number() OVER (ORDER BY id) - 1, id FROM users WHERE app = 1;
        ANALYZE;
        """)
    var postgresMilliseconds: [Double] = []
    let postgresFacade = PushFacade(store: try await PostgresStateStore.open(location: try base.inSchema(schema)))
    for round in 0..<3 {
        let start = ContinuousClock.now
        let decisions = try await postgresFacade.send(try group("p\(round)"), dialect: "agora-silent", now: now)
        postgresMilliseconds.append(seconds(ContinuousClock.now - start) * 1000)
        if decisions.count != members - 1 { fail("PostgreSQL fan-out decided \(decisions.count) receivers") }
    }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-pg-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let sqlite = try SQLiteStateStore(path: folder.appendingPathComponent("state.db").path)
    let sqliteFacade = PushFacade(store: sqlite)
    try await sqliteFacade.configure(AppConfiguration(certificates: [certificate]))
    try sqlite.write { transaction in
        for i in 0..<members {
            var state = UserState(user: "user-\(i)", displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
            state.devices = [Device(token: String(format: "%064x", i + 1), certificate: certificate)]
            try transaction.save(state, replacing: nil)
        }
    }
    try await sqliteFacade.setMembers((0..<members).map { "user-\($0)" }, of: "big")
    var sqliteMilliseconds: [Double] = []
    for round in 0..<3 {
        let start = ContinuousClock.now
        _ = try await sqliteFacade.send(try group("s\(round)"), dialect: "agora-silent", now: now)
        sqliteMilliseconds.append(seconds(ContinuousClock.now - start) * 1000)
    }
    if onlyFanOut {  // `--only-fanout`: the fan-out's lines alone
        let ratio = postgresMilliseconds.dropFirst().sorted()[0] / sqliteMilliseconds.dropFirst().sorted()[0]
        print(String(format: "fan-out to %d members, PostgreSQL: first %.0f ms, then %.0f / %.0f ms", members, postgresMilliseconds[0], postgresMilliseconds[1], postgresMilliseconds[2]))
        print(String(format: "fan-out to %d members, SQLite:     first %.0f ms, then %.0f / %.0f ms", members, sqliteMilliseconds[0], sqliteMilliseconds[1], sqliteMilliseconds[2]))
        print(String(format: "warm fan-out, PostgreSQL / SQLite (best of two each): %.2f×", ratio))
        return
    }

    // 2. One-to-one messages, 16 clients in all, each wrk run in the same process and minute: one
    //    SQLite node; then PostgreSQL with one node and with two, for one app and for eight apps.
    let clients = 16
    let adminKey = AccessKey.generate()
    var sqliteConfiguration = ServiceConfiguration(host: "127.0.0.1", port: 0, database: folder.appendingPathComponent("sqlite-node").path, logLevel: .warning)
    sqliteConfiguration.adminKeyHash = AccessKey.hash(adminKey)
    sqliteConfiguration.requestTimeoutSeconds = 30
    var configuration = sqliteConfiguration
    configuration.database = folder.path
    configuration.store = try StoreURL(try base.inSchema("bench_service"))
    if let level = ProcessInfo.processInfo.environment["PUSHBRIDGE_BENCH_LOG_LEVEL"].flatMap(Logger.Level.init(rawValue:)) { configuration.logLevel = level }
    var nodes: [(PortBox, ServiceGroup)] = []
    for node in [sqliteConfiguration, configuration, configuration] {
        let port = PortBox()
        let service = try PushBridgeService(configuration: node, storage: node.storage(from: [PostgresStorageBackend()]), vendors: [.easemob, .tencent])
        nodes.append((port, try await start(service.application { port.set($0.localAddress?.port ?? 0) }, port: port)))
    }
    let (sqliteNode, nodeA, nodeB) = (nodes[0].0.value, nodes[1].0.value, nodes[2].0.value)
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    /// Creates an app on a node with the receiver u1 and its device (u0 sends to u1); returns its key.
    func setUpApp(_ app: String, on port: Int) async throws -> String {
        var key = adminKey
        for (method, path, body) in [
            (HTTPMethod.POST, "/v1/apps", #"{"app":"\#(app)"}"#),
            (.PUT, "/v1/apps/\(app)", #"{"certificates":[{"name":"agoraTest","bundleId":"io.agora.chatdemo","environment":"production"}]}"#),
            (.POST, "/v1/apps/\(app)/users/u1/calls?dialect=agora-silent",
             #"[{"call":"initializeSDK","appkey":"1#1","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de"}]"#),
        ] {
            var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)" + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
            let answer = try await client.execute(request, timeout: .seconds(30))
            let text = String(buffer: try await answer.body.collect(upTo: 1 << 20))
            if !(200...201).contains(answer.status.code) { fail("setting up the benchmark's app \(app): \(method) \(path) answered \(answer.status) \(text)") }
            if method == .POST && path == "/v1/apps", let created = try? JSONParser.parse(text)["key"]?.stringValue { key = created }
        }
        return key
    }
    let apps = (0..<8).map { "bench\($0)" }
    // The 8 apps on the SQLite node too: what 8 apps cost the service without a database server.
    var sqliteKeys: [String] = []
    for app in apps { sqliteKeys.append(try await setUpApp(app, on: sqliteNode)) }
    let sqliteKey = sqliteKeys[0]
    var keys: [String] = []
    for app in apps { keys.append(try await setUpApp(app, on: nodeA)) }
    /// Statements the PostgreSQL nodes have sent so far (each a round trip; from their `/metrics`).
    func statementsSent() async -> Double {
        var total = 0.0
        for port in [nodeA, nodeB] {
            guard let answer = try? await client.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(10)),
                let body = try? await answer.body.collect(upTo: 1 << 22)
            else { continue }
            for line in String(buffer: body).split(separator: "\n") where line.hasPrefix("pushbridge_database_statements_total") {
                total += Double(line.split(separator: " ").last ?? "") ?? 0
            }
        }
        return total
    }
    let oneToOne = #"{"id":"%ID%","conversationId":"u1","from":"u0","to":"u1","chatType":"Chat","body":{"type":"text","text":"hello"}}"#
    // The same message to one of `spread` receivers (r0 …), each with a device: counters another node writes
    // meanwhile are mostly other users' (ruling 161).
    let spread = 1_000
    let toMany = #"{"id":"%ID%","conversationId":"r%R%","from":"u0","to":"r%R%","chatType":"Chat","body":{"type":"text","text":"hello"}}"#
    for i in 0..<spread {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(nodeA)/v1/apps/\(apps[0])/users/r\(i)/calls?dialect=agora-silent")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(keys[0])")
        request.headers.add(name: "Content-Type", value: "application/json")
        let token = String(format: "%064x", 0xfeed_0000 + i)
        request.body = .bytes(ByteBuffer(string: #"[{"call":"initializeSDK","appkey":"1#1","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(token)"}]"#))
        let answer = try await client.execute(request, timeout: .seconds(30))
        if answer.status.code != 200 { fail("setting up receiver r\(i): \(answer.status)") }
    }
    func path(_ app: String) -> String { "/v1/apps/\(app)/messages?dialect=agora-silent" }
    func messages(_ port: Int, _ app: String) -> String { "http://127.0.0.1:\(port)" + path(app) }
    /// Several wrk runs at once, each on a thread of its own (wrk blocks its thread; the nodes'
    /// handlers need the cooperative threads), with the CPU time PostgreSQL's processes and this
    /// process (both nodes) spent meanwhile.
    var runNumber = 0
    typealias Run = (figures: [WrkFigures], load: CPULoad, statements: Double)
    func load(_ runs: [LoadRun], seconds: Int = runSeconds, receivers: Int = 1) async -> Run {
        runNumber += 1
        let runNumber = runNumber
        let statementsBefore = await statementsSent()
        let before = CPULoad.sample()
        let figures = await withTaskGroup(of: (Int, WrkFigures).self) { group in
            for (i, run) in runs.enumerated() {
                group.addTask {
                    await withCheckedContinuation { continuation in
                        // Ids unique per run and client (two clients of one app on two nodes would repeat each other's);
                        // an answer counts until the service's own request timeout (wrk's default gives up after 2 s).
                        Thread.detachNewThread {
                            continuation.resume(returning: (i, wrk(url: run.url, body: receivers > 1 ? toMany : oneToOne, connections: run.connections, seconds: seconds, key: run.key,
                                idPrefix: "r\(runNumber)c\(i)w", timeoutSeconds: 30, receivers: receivers, spreadOver: run.apps)))
                        }
                    }
                }
            }
            var out = [WrkFigures?](repeating: nil, count: runs.count)
            for await (i, figures) in group { out[i] = figures }
            return out.map { $0! }
        }
        let load = CPULoad.sample().since(before)
        return (figures, load, await statementsSent() - statementsBefore)
    }
    // Warm-up: every app opened on both nodes (an app's first request on a node opens its store).
    _ = await load(apps.indices.map { LoadRun(messages(sqliteNode, apps[$0]), sqliteKeys[$0], 1) }, seconds: 2)
    _ = await load(apps.indices.flatMap { [LoadRun(messages(nodeA, apps[$0]), keys[$0], 1), LoadRun(messages(nodeB, apps[$0]), keys[$0], 1)] }, seconds: 2)
    func total(_ run: Run) -> Double { run.figures.map(\.requestsPerSecond).reduce(0, +) }
    func p99(_ run: Run) -> Double { run.figures.map(\.p99ms).max() ?? .nan }
    // A message's CPU, in the nodes and in PostgreSQL; statements a message.
    func perMessage(_ run: Run) -> (node: Double, postgres: Double, statements: Double) {
        let sent = total(run) * Double(runSeconds)
        return (run.load.ownMilliseconds / sent, run.load.postgresMilliseconds / sent, run.statements / sent)
    }
    func stopNodes() async throws {
        try await client.shutdown()
        for (_, group) in nodes { await group.triggerGracefulShutdown() }
    }
    // One app's 16 connections: all on node A, or half on each node.
    let oneAppOnOneNode = [LoadRun(messages(nodeA, apps[0]), keys[0], clients)]
    let oneAppOnTwoNodes = [LoadRun(messages(nodeA, apps[0]), keys[0], clients / 2), LoadRun(messages(nodeB, apps[0]), keys[0], clients / 2)]
    // 8 apps' 16 connections: all on node A, or each app on one of the two nodes. One client a node, as
    // for one app (its requests to each app in turn): the load client costs what it costs one app.
    func oneClient(spreadOver indices: [Int], on node: Int, keys: [String]) -> LoadRun {
        LoadRun(messages(node, apps[indices[0]]), keys[indices[0]], clients * indices.count / apps.count,
            apps: indices.map { (path(apps[$0]), keys[$0]) })
    }
    let eightAppsOnOneNode = [oneClient(spreadOver: Array(apps.indices), on: nodeA, keys: keys)]
    let eightAppsOnTwoNodes = [
        oneClient(spreadOver: apps.indices.filter { $0 % 2 == 0 }, on: nodeA, keys: keys), oneClient(spreadOver: apps.indices.filter { $0 % 2 == 1 }, on: nodeB, keys: keys),
    ]
    // The same one app and 8 apps on the SQLite node.
    let sqliteOne = [LoadRun(messages(sqliteNode, apps[0]), sqliteKey, clients)]
    let sqliteEight = [oneClient(spreadOver: Array(apps.indices), on: sqliteNode, keys: sqliteKeys)]
    // One load shape alone, for a profiler (its pid on standard error when it starts).
    let shapes = zip(shapeNames, [("8 apps, one node", eightAppsOnOneNode, 1), ("8 apps, two nodes", eightAppsOnTwoNodes, 1),
                                  ("one app, one node", oneAppOnOneNode, 1), ("one app, two nodes", oneAppOnTwoNodes, 1),
                                  ("one app, one node, \(spread) receivers", oneAppOnOneNode, spread), ("one app, two nodes, \(spread) receivers", oneAppOnTwoNodes, spread),
                                  ("SQLite, 8 apps", sqliteEight, 1), ("SQLite, one app", sqliteOne, 1)])
    if let only, let (name, (label, shape, receivers)) = shapes.first(where: { $0.0 == only }) {
        FileHandle.standardError.write(Data("start \(name) pid \(getpid())\n".utf8))
        let run = await load(shape, receivers: receivers)
        let cost = perMessage(run)
        print(String(format: "%@: %.0f/s, CPU a message: nodes %.2f ms, PostgreSQL %.2f ms; statements a message %.2f",
            label as NSString, total(run), cost.node, cost.postgres, cost.statements))
        try await stopNodes()
        return
    }
    if only == "apps-pairs" {  // one app, then 8 apps, on one node, three times, on PostgreSQL and on SQLite: the ratio pair by pair
        var ratios: [Double] = [], sqliteRatios: [Double] = []
        for pair in 1...3 {
            let one = await load(oneAppOnOneNode)
            let eight = await load(eightAppsOnOneNode)
            let sqliteOneRun = await load(sqliteOne)
            let sqliteEightRun = await load(sqliteEight)
            ratios.append(total(eight) / total(one))
            sqliteRatios.append(total(sqliteEightRun) / total(sqliteOneRun))
            print(String(format: "pair %d: PostgreSQL one app %.0f/s, 8 apps %.0f/s (%.2f×); SQLite one app %.0f/s, 8 apps %.0f/s (%.2f×)",
                pair, total(one), total(eight), ratios.last!, total(sqliteOneRun), total(sqliteEightRun), sqliteRatios.last!))
        }
        let median = ratios.sorted()[1]
        print(String(format: "8 apps against one app, one node: median of 3 adjacent pairs %.2f× (target ≥ 0.75×: %@); on SQLite %.2f× (no target)",
            median, (median >= 0.75 ? "met" : "NOT MET") as NSString, sqliteRatios.sorted()[1]))
        try await stopNodes()
        return
    }
    if only == "one-app" {  // one app on one node, then on two
        let one = await load(oneAppOnOneNode)
        let two = await load(oneAppOnTwoNodes)
        let (a, b) = (perMessage(one), perMessage(two))
        print(String(format: "one app, one node %.0f/s, two nodes %.0f/s (%.2f×); CPU a message: nodes %.2f / %.2f ms, PostgreSQL %.2f / %.2f ms; statements a message %.2f / %.2f",
            total(one), total(two), total(two) / total(one), a.node, b.node, a.postgres, b.postgres, a.statements, b.statements))
        try await stopNodes()
        return
    }
    let sqliteRun = await load(sqliteOne)
    let sqliteEightRun = await load(sqliteEight)
    let oneNode = await load(oneAppOnOneNode)
    let twoNodes = await load(oneAppOnTwoNodes)
    let oneNodeEight = await load(eightAppsOnOneNode)
    let twoNodesEight = await load(eightAppsOnTwoNodes)
    let oneNodeSpread = await load(oneAppOnOneNode, receivers: spread)
    let twoNodesSpread = await load(oneAppOnTwoNodes, receivers: spread)
    try await stopNodes()
    let runs = [sqliteRun, sqliteEightRun, oneNode, twoNodes, oneNodeEight, twoNodesEight, oneNodeSpread, twoNodesSpread]
    let non2xx = runs.flatMap(\.figures).map { $0.non2xx + $0.errors }.reduce(0, +)

    let roundTrip = try await statementRoundTrip(base, statements: 5_000)
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let fanoutRatio = median(Array(postgresMilliseconds.dropFirst())) / median(Array(sqliteMilliseconds.dropFirst()))
    print("pushbridge-bench --postgres: PostgreSQL (throwaway cluster, fsync off, loopback) and SQLite, one run; \(clients) wrk connections in all; \(ProcessInfo.processInfo.activeProcessorCount) cores shared by PostgreSQL, the nodes and wrk")
    print(String(format: "fan-out to %d members, PostgreSQL: first %.0f ms, then %.0f / %.0f ms", members, postgresMilliseconds[0], postgresMilliseconds[1], postgresMilliseconds[2]))
    print(String(format: "fan-out to %d members, SQLite:     first %.0f ms, then %.0f / %.0f ms", members, sqliteMilliseconds[0], sqliteMilliseconds[1], sqliteMilliseconds[2]))
    for (name, run) in [("SQLite, one node, one app", sqliteRun), ("SQLite, one node, 8 apps", sqliteEightRun), ("PostgreSQL, one node, one app", oneNode), ("PostgreSQL, two nodes, one app", twoNodes),
                        ("PostgreSQL, one node, 8 apps", oneNodeEight), ("PostgreSQL, two nodes, 8 apps", twoNodesEight),
                        ("PG, one node, one app, \(spread) rcv", oneNodeSpread), ("PG, two nodes, one app, \(spread) rcv", twoNodesSpread)] {
        let rps = total(run)
        let failed = run.figures.map { $0.non2xx + $0.errors }.reduce(0, +)
        let cost = perMessage(run)
        print(String(format: "one-to-one, %-31@ %7.0f/s  p50 %6.2f ms  p99 %7.2f ms   CPU a message: nodes %.2f ms, PostgreSQL %.2f ms; statements a message %.1f; machine %3.0f%% busy",
            name as NSString, rps, run.figures.map(\.p50ms).max() ?? .nan, p99(run), cost.node, cost.postgres, cost.statements, run.load.busyPercent) + (failed > 0 ? "  (\(failed) non-2xx or errors)" : ""))
    }
    print(String(format: "a statement's round trip (SELECT 1, 5,000 in a row, awaited): %.0f µs, %.0f µs of the node's CPU", roundTrip.wall, roundTrip.cpu))
    func target(_ text: String, _ value: Double, _ met: Bool, _ format: String) {
        print("target  \(text): " + String(format: format, value) + (met ? "  met" : "  NOT MET"))
    }
    let (one, two) = (perMessage(oneNodeEight), perMessage(twoNodesEight))
    let cpuRatio = (two.node + two.postgres) / (one.node + one.postgres)
    target("PostgreSQL one node ≥ 0.8 of one SQLite node (one app)", total(oneNode) / total(sqliteRun), total(oneNode) / total(sqliteRun) >= 0.8, "%.2f")
    target("one node, 8 apps ≥ 0.75× one node, one app", total(oneNodeEight) / total(oneNode), total(oneNodeEight) / total(oneNode) >= 0.75, "%.2f×")
    // No target: the same ratio with no database server, so that one run tells PostgreSQL's share of it.
    print(String(format: "reference  8 apps against one app on SQLite (no target: what 8 apps cost the service itself): %.2f×", total(sqliteEightRun) / total(sqliteRun)))
    target("p99 ≤ 20 ms, 8 apps on one node", p99(oneNodeEight), p99(oneNodeEight) <= 20, "%.1f ms")
    target("p99 ≤ 30 ms, 8 apps on two nodes", p99(twoNodesEight), p99(twoNodesEight) <= 30, "%.1f ms")
    target("statements a message ≤ 1.5 at 8 apps (the larger of one and two nodes)", max(one.statements, two.statements), max(one.statements, two.statements) <= 1.5, "%.2f")
    target("two nodes, one app ≥ 0.75× one node (one app on two nodes must not halve)", total(twoNodes) / total(oneNode), total(twoNodes) / total(oneNode) >= 0.75, "%.2f×")
    target("two nodes' CPU a message (nodes + PostgreSQL) ≤ 1.1× one node's, 8 apps", cpuRatio, cpuRatio <= 1.1, "%.2f×")
    target("warm \(members)-member fan-out on PostgreSQL ≤ 2× SQLite's warm", fanoutRatio, fanoutRatio <= 2, "%.2f×")
    target("p99 of one-to-one on PostgreSQL ≤ 50 ms (one node, one app)", p99(oneNode), p99(oneNode) <= 50, "%.1f ms")
    let spreadRatio = total(twoNodesSpread) / total(oneNodeSpread)
    target("two nodes, one app, its messages spread over \(spread) receivers ≥ 0.9× one node", spreadRatio, spreadRatio >= 0.9, "%.2f×")
    // The scale model (SeveralNodes): what nodes on machines of their own would do, from the CPU a message measured
    // here for 8 apps on two nodes (cross-node reads included). A projection, not a measurement.
    let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
    let nodeBound = cores * 1000 / two.node
    let databaseBound = cores * 1000 / two.postgres
    print(String(format: "projection (not measured): many apps, each node and the database on %.0f cores of their own: a node %.0f/s (%.2f ms a message), the database %.0f/s (%.2f ms a message)",
        cores, nodeBound, two.node, databaseBound, two.postgres))
    for n in [1, 2, 4, 8] {
        let projected = min(Double(n) * nodeBound, databaseBound)
        print(String(format: "projection (not measured): %d node(s), many apps: %.0f/s, bound by %@", n, projected, (Double(n) * nodeBound < databaseBound ? "the nodes' CPU" : "the database's CPU") as NSString))
    }
    print(String(format: "projection (not measured): one app, any number of nodes: about %.0f/s to one receiver, %.0f/s spread over %d (measured on two nodes; its writes take one advisory lock in turn, so nodes add availability, not throughput)",
        total(twoNodes), total(twoNodesSpread), spread))
    var w = JSONWriter()
    w.write(.object(JSONObject([
        ("fanout_members", .int(Int64(members))),
        ("postgres_fanout_ms", .array(postgresMilliseconds.map { .double($0.rounded()) })), ("sqlite_fanout_ms", .array(sqliteMilliseconds.map { .double($0.rounded()) })),
        ("sqlite_one_node_rps", .double(total(sqliteRun).rounded())), ("sqlite_8_apps_rps", .double(total(sqliteEightRun).rounded())), ("one_node_rps", .double(total(oneNode).rounded())), ("two_nodes_rps", .double(total(twoNodes).rounded())),
        ("one_node_8_apps_rps", .double(total(oneNodeEight).rounded())), ("two_nodes_8_apps_rps", .double(total(twoNodesEight).rounded())),
        ("one_node_spread_rps", .double(total(oneNodeSpread).rounded())), ("two_nodes_spread_rps", .double(total(twoNodesSpread).rounded())),
        ("one_node_p99_ms", .double(p99(oneNode))), ("one_node_8_apps_p99_ms", .double(p99(oneNodeEight))), ("two_nodes_8_apps_p99_ms", .double(p99(twoNodesEight))),
        ("statements_a_message_8_apps", .double(max(one.statements, two.statements))), ("two_nodes_cpu_ratio_8_apps", .double(cpuRatio)),
        ("one_node_ratio_to_sqlite", .double(total(oneNode) / total(sqliteRun))), ("eight_apps_ratio_to_one_app", .double(total(oneNodeEight) / total(oneNode))),
        ("sqlite_eight_apps_ratio_to_one_app", .double(total(sqliteEightRun) / total(sqliteRun))),
        ("two_nodes_ratio_to_one_node", .double(total(twoNodes) / total(oneNode))),
        ("non_2xx", .int(Int64(non2xx))),
    ])))
    print(w.string)
    if non2xx > 0 { fail("the nodes answered non-2xx responses or dropped connections under load") }
}

/// What one statement's round trip costs the node: `SELECT 1` on one connection, awaited as the store
/// awaits its statements, three rounds.
/// - Returns: microseconds a statement, wall and this process's CPU, the best round.
func statementRoundTrip(_ location: PostgresLocation, statements: Int) async throws -> (wall: Double, cpu: Double) {
    let quiet = Logger(label: "pushbridge.bench", factory: { _ in SwiftLogNoOpLogHandler() })
    let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: location.configuration, id: 1, logger: quiet)
    defer { connection.close().whenComplete { _ in withExtendedLifetime(connection) {} } }
    var rounds: [(wall: Double, cpu: Double)] = []
    for _ in 0..<3 {
        let before = CPULoad.sample()
        let start = ContinuousClock.now
        for _ in 0..<statements { for try await _ in try await connection.query("SELECT 1", logger: quiet) {} }
        let wall = seconds(ContinuousClock.now - start)
        rounds.append((wall * 1e6 / Double(statements), CPULoad.sample().since(before).ownMilliseconds * 1e3 / Double(statements)))
    }
    return rounds.min { $0.wall < $1.wall }!
}

/// CPU time spent by PostgreSQL's processes and by this process (the nodes) over a span, and how
/// busy the machine was: where a message's time goes (from /proc; zeros elsewhere).
struct CPULoad {
    var postgresMilliseconds = 0.0
    var ownMilliseconds = 0.0
    var machineBusy = 0.0
    var machineTotal = 0.0
    var busyPercent: Double { machineTotal > 0 ? 100 * machineBusy / machineTotal : .nan }

    static func sample() -> CPULoad {
        let tick = 1000 / Double(sysconf(Int32(_SC_CLK_TCK)))
        func times(_ stat: String) -> Double? {
            // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
            guard let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
            return (user + system) * tick
        }
        var load = CPULoad()
        load.ownMilliseconds = (try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8)).flatMap(times) ?? 0
        for pid in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] where Int(pid) != nil {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), stat.contains("(postgres)") else { continue }
            load.postgresMilliseconds += times(stat) ?? 0
        }
        if let cpu = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8))?.split(separator: "\n").first {
            let values = cpu.split(separator: " ").dropFirst().compactMap { Double($0) }
            if values.count >= 5 {
                load.machineTotal = values.reduce(0, +)
                load.machineBusy = load.machineTotal - values[3] - values[4]  // idle and iowait
            }
        }
        return load
    }

    func since(_ earlier: CPULoad) -> CPULoad {
        CPULoad(postgresMilliseconds: postgresMilliseconds - earlier.postgresMilliseconds, ownMilliseconds: ownMilliseconds - earlier.ownMilliseconds,
            machineBusy: machineBusy - earlier.machineBusy, machineTotal: machineTotal - earlier.machineTotal)
    }
}
