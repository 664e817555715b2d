// `make bench-campaign`: a push task to every user of a large app (1,000,000 users with one device each
// by default) through Easemob's `POST /push/task`, delivered into the mock APNs at 100 ms an answer,
// beside h2load on the same mock in the same run; on SQLite, and on PostgreSQL when a cluster is given
// (`Tests/Scripts/with-postgres.sh` sets PUSHBRIDGE_TEST_POSTGRES_URL), with the ratio between them.
// Targets: the task accepted in < 100 ms; every receiver decided and queued in ≤ 60 s; delivered at
// ≥ 0.8 of h2load's rate; the process's peak memory during the task ≤ 500 MB; a chat user's one-to-one
// messages (20 a second) answered and at APNs with a p99 during the campaign ≤ 2× their p99 before it.
import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeDelivery
import PushBridgeFacade
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeServer
import PushBridgeStore
import Synchronization

/// One store's campaign figures.
struct CampaignFigures {
    var store: String
    var users: Int
    var seedSeconds: Double
    var acceptMilliseconds: Double
    /// When every receiver was decided, or `nil` when the time allowed ran out first.
    var decidedSeconds: Double?
    /// Receivers decided when the run ended.
    var decided: Int
    /// Deliveries recorded when the run ended, and when that was (from the task's acceptance).
    var delivered: Int
    var endedSeconds: Double
    var peakMegabytes: Double
    /// The chat user's one-to-one messages before the task, and while its deliveries were being made.
    var chatBefore: ChatProbe.Figures
    var chatDuring: ChatProbe.Figures
    /// The CPU while the receivers were decided (the deliveries made meanwhile in it), and from then to
    /// the last delivery recorded (`nil`: the time allowed ran out first).
    var deciding: CPUSpan
    var delivering: CPUSpan?
    var decideRate: Double { decidedSeconds.map { Double(users) / $0 } ?? Double(decided) / endedSeconds }
    var rate: Double { Double(delivered) / endedSeconds }
}

/// The CPU a span of a campaign took: this process (the service and the mock APNs) and PostgreSQL's
/// processes, the deliveries recorded in it, and its length.
struct CPUSpan {
    var load: CPULoad
    var deliveries: Int
    var seconds: Double

    /// This process's and PostgreSQL's CPU, in seconds.
    var cpuSeconds: Double { (load.ownMilliseconds + load.postgresMilliseconds) / 1000 }
    /// The fewest deliveries a span after the deciding needs for its CPU a delivery to mean anything:
    /// a store whose deliveries kept pace leaves a fraction of a second, most of it the run's end.
    static let fewestDeliveries = 10_000
    /// The CPU a delivery of the span, in µs (`nil`: fewer than ``fewestDeliveries``).
    var microsecondsADelivery: Double? { deliveries >= Self.fewestDeliveries ? cpuSeconds * 1e6 / Double(deliveries) : nil }
}

/// One-to-one messages to a chat user, one every 50 ms, each timed from its request to its answer and
/// to its arrival at the mock APNs (known by its `apns-id`, which names the message and the token).
final class ChatProbe: Sendable {
    /// A run of the probe's messages.
    struct Figures {
        var sent = 0
        /// Those that had not reached the mock APNs 10 s after the last was sent.
        var missing = 0
        var answerP99Milliseconds = Double.nan
        var apnsP99Milliseconds = Double.nan
    }

    /// The chat user's device token.
    static let token = String(repeating: "c", count: 64)
    private let app: String
    /// apns-id → when its message was sent, and when it reached the mock (`nil`: not yet).
    private let times = Mutex<[String: (sent: ContinuousClock.Instant, arrived: ContinuousClock.Instant?)]>([:])

    init(app: String) { self.app = app }

    /// The mock's watcher: notes the arrival of a probe message's push.
    /// How many of the probe's pushes reached the mock so far.
    var arrivedCount: Int { times.withLock { $0.values.filter { $0.arrived != nil }.count } }

    func arrived(_ request: MockAPNs.Request) {
        guard request.token == Self.token, let id = request.apnsID else { return }
        let now = ContinuousClock.now
        times.withLock { if let sent = $0[id]?.sent, $0[id]?.arrived == nil { $0[id] = (sent, now) } }
    }

    /// Sends messages `prefix-1`, `prefix-2`, … one every 50 ms until `goesOn` is false, then waits for their pushes.
    /// - Parameter send: posts one message by id and returns when it is answered.
    func run(prefix: String, goesOn: @Sendable () -> Bool, send: @Sendable (String) async throws -> Void) async throws -> Figures {
        var answers: [Double] = []
        var ids: [String] = []
        var next = ContinuousClock.now
        while goesOn() {
            let id = "\(prefix)-\(ids.count + 1)"
            let apnsID = APNsID.make(app: app, message: id, token: Self.token)
            let started = ContinuousClock.now
            times.withLock { $0[apnsID] = (started, nil) }
            try await send(id)
            answers.append(seconds(ContinuousClock.now - started) * 1000)
            ids.append(apnsID)
            next += .milliseconds(50)
            if next > .now { try await Task.sleep(until: next) }
        }
        let waitEnd = ContinuousClock.now + .seconds(10)
        var arrived: [Double] = []
        while true {
            arrived = times.withLock { t in
                ids.compactMap { id in t[id].flatMap { time in time.arrived.map { seconds($0 - time.sent) * 1000 } } }
            }
            if arrived.count == ids.count || ContinuousClock.now > waitEnd { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        func p99(_ values: [Double]) -> Double {
            values.isEmpty ? .nan : values.sorted()[min(values.count - 1, Int((Double(values.count) * 0.99).rounded(.up)) - 1)]
        }
        return Figures(sent: ids.count, missing: ids.count - arrived.count, answerP99Milliseconds: p99(answers), apnsP99Milliseconds: p99(arrived))
    }
}

/// Token credentials for the mock APNs in `dir`: `AuthKey.p8`, `ca.pem` and `credentials.yaml`.
struct BenchCredentials {
    let keyID = "BENCHKEY01"
    let teamID = "BENCHTEAM1"
    let signingKey = P256.Signing.PrivateKey()
    /// The folder of the files.
    let dir: String

    /// Writes the key, the mock's CA and the credentials file into `dir`.
    init(writingInto dir: String) throws {
        self.dir = dir
        try signingKey.pemRepresentation.write(toFile: dir + "/AuthKey.p8", atomically: true, encoding: .utf8)
        try MockAPNsCredentials.caCertificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
        try """
            - topics: ["*"]
              key-file: AuthKey.p8
              key-id: \(keyID)
              team-id: \(teamID)
            """.write(toFile: dir + "/credentials.yaml", atomically: true, encoding: .utf8)
    }

    /// The delivery settings of a service delivering to `mock` with these credentials.
    func delivery(mock: MockAPNs, connections: Int, concurrency: Int) -> ServiceConfiguration.Delivery {
        var delivery = ServiceConfiguration.Delivery(credentialsFile: dir + "/credentials.yaml")
        delivery.apnsURL = mock.baseURL
        delivery.caFile = dir + "/ca.pem"
        delivery.concurrency = concurrency
        delivery.connections = connections
        return delivery
    }

    /// h2load's headers for a request the mock accepts.
    var h2loadHeaders: [String] {
        let jwt = ProviderTokenSigner(key: signingKey, keyID: keyID, teamID: teamID).token(now: Int64(Date().timeIntervalSince1970)).jwt
        return ["authorization: bearer \(jwt)", "apns-topic: io.bench.app", "apns-push-type: alert", "apns-priority: 10", "apns-expiration: 0"]
    }
}

/// The process's peak resident memory since the last ``resetPeakMemory()``, in megabytes (Linux's `VmHWM`).
func peakMemoryMegabytes() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
    else { return 0 }
    return (Double(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
}

/// Starts a new peak for ``peakMemoryMegabytes()`` (writes 5 to `/proc/self/clear_refs`).
func resetPeakMemory() {
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
}

/// The whole campaign benchmark; prints each store's figures and target lines as its run ends, then one JSON line.
/// - Parameters:
///   - users: the app's users, each with one production device.
///   - latency: the mock's milliseconds an answer.
///   - connections: HTTP/2 connections (the service's and h2load's).
///   - concurrency: deliveries in flight (the service's; h2load's `-c × -m`).
///   - pageSize: `push-task-page-size`.
///   - rate: `push-task-rate` (0: no limit).
///   - limit: how long a store's run is followed before its figures are taken as they stand.
func runCampaignBench(users: Int, latency: Int, connections: Int, concurrency: Int, pageSize: Int, rate: Int, limit: Int) async throws {
    let dir = try makeTemporaryFolder("pushbridge-campaign-bench").path
    let credentials = try BenchCredentials(writingInto: dir)
    let mock = try await MockAPNs.start(.init(
        tokenKeys: [credentials.keyID: (credentials.teamID, credentials.signingKey.publicKey)], recordsRequests: false, latency: .init(milliseconds: latency)))
    let payload = Array(#"{"aps":{"alert":{"title":"Sale","body":"Campaign"},"sound":"default"}}"#.utf8)
    let streams = max(1, concurrency / connections)
    let url = mock.baseURL + "/3/device/" + String(repeating: "ab", count: 32)
    _ = h2load(url: url, headers: credentials.h2loadHeaders, payload: payload, requests: min(users, 20 * concurrency), connections: connections, streams: streams)
    let ceilingRequests = min(users, 200_000)
    let ceiling = h2load(url: url, headers: credentials.h2loadHeaders, payload: payload, requests: ceilingRequests, connections: connections, streams: streams)
    guard ceiling.status2xx == ceilingRequests else { fail("h2load: \(ceiling.status2xx) of \(ceilingRequests) answered 2xx") }

    print("pushbridge-bench --campaign: Easemob POST /push/task to every user of an app of \(users) users (one production device each); "
        + "mock APNs at \(latency) ms an answer; \(connections) connections × \(streams) streams (service: delivery-concurrency \(concurrency)); "
        + "push-task-page-size \(pageSize), push-task-rate \(rate == 0 ? "0 (no limit)" : "\(rate)/s"); each store's run followed for at most \(limit) s")
    print(String(format: "  h2load → mock APNs (ceiling, %d requests)                %10.0f deliveries/s", ceilingRequests, ceiling.requestsPerSecond))
    let judged = users >= 1_000_000
    func verdict(_ met: Bool) -> String { !judged ? "not judged below 1,000,000 users" : met ? "met" : "NOT MET" }
    func report(_ run: CampaignFigures) {
        let ratio = run.rate / ceiling.requestsPerSecond
        print("— \(run.store) (users and devices written directly in \(String(format: "%.1f", run.seedSeconds)) s, not measured)")
        print(String(format: "  task accepted in %.1f ms (target < 100 ms: %@)", run.acceptMilliseconds, verdict(run.acceptMilliseconds < 100)))
        if let decided = run.decidedSeconds {
            print(String(format: "  every receiver decided and queued in %.1f s, %.0f receivers/s (target ≤ 60 s: %@)", decided, run.decideRate, verdict(decided <= 60)))
        } else {
            print(String(format: "  %d of %d receivers decided and queued in %.0f s (time allowed out), %.0f receivers/s (target: all in ≤ 60 s: %@)", run.decided,
                run.users, run.endedSeconds, run.decideRate, verdict(false)))
        }
        print(String(format: "  %d deliveries recorded in %.1f s: %.0f deliveries/s, ratio to h2load %.2f (target ≥ 0.80: %@)", run.delivered, run.endedSeconds,
            run.rate, ratio, verdict(ratio >= 0.8)))
        print(String(format: "  peak memory during the task %.0f MB (the whole process, the mock APNs in it; target ≤ 500 MB: %@)", run.peakMegabytes,
            verdict(run.peakMegabytes <= 500)))
        let (b, d) = (run.chatBefore, run.chatDuring)
        let answerRatio = d.answerP99Milliseconds / b.answerP99Milliseconds
        let apnsRatio = d.apnsP99Milliseconds / b.apnsP99Milliseconds
        print(String(format: "  chat one-to-one, 20/s to a user of its own: p99 answered %.1f ms and at APNs %.1f ms before the task (%d sent); "
            + "during its deliveries %.1f ms and %.1f ms (%d sent, %d missing): %.2f× and %.2f× (target ≤ 2×: %@)",
            b.answerP99Milliseconds, b.apnsP99Milliseconds, b.sent, d.answerP99Milliseconds, d.apnsP99Milliseconds, d.sent, d.missing + b.missing,
            answerRatio, apnsRatio, verdict(answerRatio <= 2 && apnsRatio <= 2 && d.missing + b.missing == 0)))
        // Where the two cores went: deciding shares them with the deliveries made meanwhile.
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        let span = run.deciding
        print(String(format: "  CPU while deciding (%.1f s, %d deliveries recorded meanwhile): this process %.1f s, PostgreSQL %.1f s, "
            + "the machine %.0f%% busy (%.0f cores); %.0f µs a receiver decided, its deliveries so far included", span.seconds, span.deliveries,
            span.load.ownMilliseconds / 1000, span.load.postgresMilliseconds / 1000, span.load.busyPercent, cores, span.cpuSeconds * 1e6 / Double(max(1, run.decided))))
        if let after = run.delivering, let each = after.microsecondsADelivery {
            print(String(format: "  CPU from then to the last delivery (%.1f s, %d deliveries): this process %.1f s, PostgreSQL %.1f s; %.0f µs a delivery",
                after.seconds, after.deliveries, after.load.ownMilliseconds / 1000, after.load.postgresMilliseconds / 1000, each))
        }
    }

    var runs: [CampaignFigures] = []
    runs.append(try await campaignRun(
        store: nil, users: users, dir: dir + "/sqlite", credentials: credentials, mock: mock, connections: connections, concurrency: concurrency, pageSize: pageSize,
        rate: rate, limit: limit))
    report(runs[0])
    if let postgres = ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"] {
        runs.append(try await campaignRun(
            store: postgres, users: users, dir: dir + "/postgres", credentials: credentials, mock: mock, connections: connections, concurrency: concurrency,
            pageSize: pageSize, rate: rate, limit: limit))
        report(runs[1])
        print(String(format: "PostgreSQL / SQLite: %.2f× the receivers decided a second, %.2f× the deliveries a second", runs[1].decideRate / runs[0].decideRate,
            runs[1].rate / runs[0].rate))
    }
    await mock.stop()
    var w = JSONWriter()
    w.write(.object(JSONObject([
        ("users", .int(Int64(users))), ("latency_ms", .int(Int64(latency))), ("h2load_rps", .double(ceiling.requestsPerSecond.rounded())),
        ("runs", .array(runs.map { run in
            .object(JSONObject([
                ("store", .string(run.store)), ("accept_ms", .double((run.acceptMilliseconds * 10).rounded() / 10)), ("decided", .int(Int64(run.decided))),
                ("decided_s", run.decidedSeconds.map { .double(($0 * 10).rounded() / 10) } ?? .null), ("receivers_per_second", .double(run.decideRate.rounded())),
                ("delivered", .int(Int64(run.delivered))), ("ended_s", .double((run.endedSeconds * 10).rounded() / 10)),
                ("deliveries_per_second", .double(run.rate.rounded())), ("ratio", .double((run.rate / ceiling.requestsPerSecond * 1000).rounded() / 1000)),
                ("peak_mb", .double(run.peakMegabytes.rounded())),
                ("chat_p99_answer_ms_before", .double((run.chatBefore.answerP99Milliseconds * 10).rounded() / 10)),
                ("chat_p99_apns_ms_before", .double((run.chatBefore.apnsP99Milliseconds * 10).rounded() / 10)),
                ("chat_p99_answer_ms_during", .double((run.chatDuring.answerP99Milliseconds * 10).rounded() / 10)),
                ("chat_p99_apns_ms_during", .double((run.chatDuring.apnsP99Milliseconds * 10).rounded() / 10)),
                ("chat_missing", .int(Int64(run.chatBefore.missing + run.chatDuring.missing))),
                ("cpu_deciding_process_s", .double((run.deciding.load.ownMilliseconds / 100).rounded() / 10)),
                ("cpu_deciding_postgres_s", .double((run.deciding.load.postgresMilliseconds / 100).rounded() / 10)),
                ("deliveries_while_deciding", .int(Int64(run.deciding.deliveries))),
                ("cpu_us_a_delivery_after", run.delivering?.microsecondsADelivery.map { .double($0.rounded()) } ?? .null),
            ]))
        })),
    ])))
    print(w.string)
}

/// One store's run: the app seeded, a service delivering to `mock`, the task made and followed to its last delivery.
/// - Parameter store: a PostgreSQL URL, or `nil` for SQLite files in `dir`.
private func campaignRun(
    store: String?, users: Int, dir: String, credentials: BenchCredentials, mock: MockAPNs, connections: Int, concurrency: Int, pageSize: Int, rate: Int,
    limit: Int
) async throws -> CampaignFigures {
    try FileManager.default.createDirectory(atPath: dir + "/apps", withIntermediateDirectories: true)
    let adminKey = AccessKey.generate()
    let certificate = Certificate(name: "cert", busiId: nil, bundleId: "io.bench.app", environment: .production)
    var seedSeconds = 0.0
    var key = AccessKey.generate()
    if store == nil {
        // Written before the service starts, as a restore would leave them.
        let started = ContinuousClock.now
        _ = try await SQLiteAppDirectory(path: dir + "/service.sqlite").register(RegisteredApp(id: "bench", keyHash: AccessKey.hash(key), createdAt: .now))
        let sqlite = try SQLiteStateStore(path: dir + "/apps/bench.sqlite")
        try await PushFacade(store: sqlite).configure(AppConfiguration(certificates: [certificate]))
        for chunk in stride(from: 0, to: users, by: 100_000) {
            try sqlite.write { transaction in
                for i in chunk..<min(users, chunk + 100_000) {
                    var state = UserState(user: "u\(i)", displayStyle: .messageSummary, backgroundGraceSeconds: 0)
                    state.devices = [Device(token: String(format: "%064x", i + 1), certificate: certificate)]
                    try transaction.save(state, replacing: nil)
                }
            }
        }
        seedSeconds = seconds(ContinuousClock.now - started)
    }
    var configuration = ServiceConfiguration(host: "127.0.0.1", port: 0, database: dir, adminKeyHash: AccessKey.hash(adminKey), logLevel: .warning)
    configuration.requestTimeoutSeconds = 60
    configuration.pushTaskPageSize = pageSize
    configuration.pushTaskRate = rate == 0 ? nil : rate
    configuration.delivery = credentials.delivery(mock: mock, connections: connections, concurrency: concurrency)
    if let store { configuration.store = try StoreURL(try PostgresLocation(url: store).inSchema("bench_campaign")) }
    let service = try PushBridgeService(configuration: configuration, storage: configuration.storage(from: [PostgresStorageBackend()]), vendors: [.easemob])
    let port = PortBox()
    let group = try await start(service.application { port.set($0.localAddress?.port ?? 0) }, port: port)
    let base = "http://127.0.0.1:\(port.value)"
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    func call(_ method: HTTPMethod, _ path: String, key: String?, body: String? = nil) async throws -> (status: UInt, json: JSONValue?, text: String) {
        var request = HTTPClientRequest(url: base + path)
        request.method = method
        if let key { request.headers.add(name: "Authorization", value: "Bearer \(key)") }
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: body))
        }
        let response = try await client.execute(request, timeout: .seconds(120))
        let text = String(buffer: try await response.body.collect(upTo: 64 << 20))
        return (response.status.code, try? JSONParser.parse(text), text)
    }
    func expect(_ reply: (status: UInt, json: JSONValue?, text: String), _ status: UInt, _ what: String) {
        if reply.status != status { fail("\(what): answered \(reply.status): \(reply.text.prefix(300))") }
    }
    func deliveredSoFar() async throws -> (delivered: Int, failed: Int) {
        var counts = (delivered: 0, failed: 0)
        for line in try await call(.GET, "/metrics", key: nil).text.split(separator: "\n") where line.hasPrefix("pushbridge_deliveries_total{") {
            let count = Int(Double(line.split(separator: " ").last ?? "") ?? 0)
            if line.contains(#"outcome="delivered""#) { counts.delivered += count } else if line.contains(#"outcome="failed""#) { counts.failed += count }
        }
        return counts
    }

    // The app (on PostgreSQL made here, then its rows filled by psql), and Easemob credentials.
    if store != nil {
        let created = try await call(.POST, "/v1/apps", key: adminKey, body: #"{"app":"bench"}"#)
        expect(created, 201, "creating the app")
        key = created.json?["key"]?.stringValue ?? ""
    }
    expect(try await call(.PUT, "/v1/apps/bench", key: key, body: #"{"certificates":[{"name":"cert","bundleId":"io.bench.app","environment":"production"}]}"#), 200, "configuring the app")
    if let store {
        let started = ContinuousClock.now
        // The service's directory is in schema bench_campaign (its store setting), the apps' tables in bench_campaign_apps.
        let app = runLoadTool(["psql", "-tA", store, "-c", "SELECT key FROM bench_campaign_apps.apps WHERE id = 'bench'"], package: "postgresql-client")
            .trimmingCharacters(in: .whitespacesAndNewlines)
        guard Int(app) != nil else { fail("PostgreSQL: the app bench has no number in bench_campaign_apps.apps: \(app)") }
        psql(store, """
            SET search_path TO bench_campaign_apps;
            INSERT INTO users (app, name, configured) SELECT \(app), 'u' || i, true FROM generate_series(0, \(users - 1)) i;
            INSERT INTO devices (app, token, user_id, certificate_id, bound_at)
                SELECT \(app), lpad(to_hex(u.id), 64, '0'), u.id, (SELECT min(id) FROM certificates WHERE app = \(app)), 0 FROM users u WHERE u.app = \(app);
            UPDATE apps SET data_version = data_version + 1 WHERE key = \(app);
            ANALYZE;
            """)
        seedSeconds = seconds(ContinuousClock.now - started)
    }
    let secret = "bench-secret-0123456789"
    expect(try await call(
        .PUT, "/v1/apps/bench/vendors/easemob", key: key, body: #"{"org":"acme","app":"bench","clientId":"YXA6-bench","clientSecret":"\#(secret)"}"#), 200,
        "binding Easemob")
    let token = try await call(.POST, "/acme/bench/token", key: nil, body: #"{"grant_type":"client_credentials","client_id":"YXA6-bench","client_secret":"\#(secret)"}"#)
    expect(token, 200, "the Easemob token")
    let bearer = token.json?["access_token"]?.stringValue ?? ""

    // A chat user of its own (every user gets the task's push too), and its one-to-one messages for 5 s before the task.
    let probe = ChatProbe(app: "bench")
    mock.watchArrivals { probe.arrived($0) }
    defer { mock.watchArrivals(nil) }
    expect(try await call(
        .POST, "/v1/apps/bench/users/chat/calls?dialect=agora-silent", key: key,
        body: #"[{"call":"initializeSDK","appkey":"acme#bench","apnsCertName":"cert"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(ChatProbe.token)"}]"#),
        200, "registering the chat user")
    let chat: @Sendable (String) async throws -> Void = { [client, base, key] id in
        var request = HTTPClientRequest(url: base + "/v1/apps/bench/messages?dialect=agora-silent&answer=summary")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(key)")
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(ByteBuffer(string: #"{"id":"\#(id)","conversationId":"chat","from":"boss","to":"chat","chatType":"Chat","body":{"type":"text","text":"hi"}}"#))
        let response = try await client.execute(request, timeout: .seconds(120))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        if response.status.code != 201 { fail("a chat message: answered \(response.status.code): \(text.prefix(300))") }
    }
    let quietUntil = ContinuousClock.now + .seconds(5)
    let chatBefore = try await probe.run(prefix: "before", goesOn: { ContinuousClock.now < quietUntil }, send: chat)
    let campaignUsers = users + 1

    // The task, followed: decided (the task finished), then every delivery recorded; the chat messages go on meanwhile.
    let before = try await deliveredSoFar()
    let probeBefore = probe.arrivedCount
    resetPeakMemory()
    let started = ContinuousClock.now
    let cpuAtStart = CPULoad.sample()
    let accepted = try await call(.POST, "/acme/bench/push/task", key: bearer, body: #"{"pushMessage":{"title":"Sale","content":"Campaign"}}"#)
    let acceptMilliseconds = seconds(ContinuousClock.now - started) * 1000
    expect(accepted, 200, "the push task")
    guard let task = accepted.json?["data"]?.intValue else { fail("the push task's answer has no id: \(accepted.text.prefix(300))") }
    let probing = Mutex(true)
    let during = Task { try await probe.run(prefix: "during", goesOn: { probing.withLock { $0 } }, send: chat) }
    let deadline = ContinuousClock.now + .seconds(limit)
    var decidedSeconds: Double?
    var decided = 0
    var delivered = 0
    /// The CPU and the deliveries when every receiver was decided.
    var atDecided: (load: CPULoad, delivered: Int)?
    var lastLine = ContinuousClock.now
    while true {
        if decidedSeconds == nil {
            let listed = try await call(.GET, "/v1/apps/bench/push-tasks", key: key)
            let status = listed.json?["tasks"]?.arrayValue?.first { $0["id"]?.intValue == task }
            decided = min(users, Int(status?["targets"]?.intValue ?? 0))
            if status?["state"] == "finished" { decidedSeconds = seconds(ContinuousClock.now - started) }
            if ContinuousClock.now - lastLine > .seconds(10) {
                lastLine = .now
                FileHandle.standardError.write(Data("  \(decided) of \(users) decided after \(Int(seconds(ContinuousClock.now - started))) s\n".utf8))
            }
        }
        let now = try await deliveredSoFar()
        if now.failed > before.failed { fail("\(now.failed - before.failed) deliveries failed") }
        // The chat pushes counted once they reach the mock, before they are recorded: never more than the task's.
        // A chat push is at the mock for its latency before it is recorded, so near the end the task's own
        // counts (its messages' deliveries) say whether every one of its pushes is recorded.
        delivered = now.delivered - before.delivered - (probe.arrivedCount - probeBefore)
        if decidedSeconds != nil && atDecided == nil { atDecided = (CPULoad.sample(), delivered) }
        if decidedSeconds != nil && delivered >= campaignUsers - 20 {
            let status = try await call(.GET, "/v1/apps/bench/push-tasks/\(task)", key: key)
            delivered = status.json?["deliveries"]?["delivered"]?.intValue.map(Int.init) ?? delivered
            if delivered >= campaignUsers { break }
        }
        if ContinuousClock.now > deadline { break }
        try await Task.sleep(for: .milliseconds(100))
    }
    let endedSeconds = seconds(ContinuousClock.now - started)
    let cpuAtEnd = CPULoad.sample()
    let deciding = atDecided.map { CPUSpan(load: $0.load.since(cpuAtStart), deliveries: $0.delivered, seconds: decidedSeconds ?? endedSeconds) }
        ?? CPUSpan(load: cpuAtEnd.since(cpuAtStart), deliveries: delivered, seconds: endedSeconds)
    let delivering = atDecided.map { CPUSpan(load: cpuAtEnd.since($0.load), deliveries: delivered - $0.delivered, seconds: endedSeconds - (decidedSeconds ?? endedSeconds)) }
    let peak = peakMemoryMegabytes()
    probing.withLock { $0 = false }
    let chatDuring = try await during.value
    // A task still running is cancelled, so the service stops at once.
    if decidedSeconds == nil { _ = try await call(.POST, "/v1/apps/bench/push-tasks/\(task)/cancel", key: key) }
    try await client.shutdown()
    await group.triggerGracefulShutdown()
    return CampaignFigures(
        store: store == nil ? "SQLite" : "PostgreSQL", users: users, seedSeconds: seedSeconds, acceptMilliseconds: acceptMilliseconds, decidedSeconds: decidedSeconds,
        decided: decidedSeconds == nil ? decided : users, delivered: delivered, endedSeconds: endedSeconds, peakMegabytes: peak,
        chatBefore: chatBefore, chatDuring: chatDuring, deciding: deciding, delivering: delivering)
}
