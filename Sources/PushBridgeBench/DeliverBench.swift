// `make bench-deliver`: the service delivering into the mock APNs on loopback, and h2load driving the same
// mock in the same run as the ceiling, at 0 ms and at 100 ms per answer. Targets: ≥ 0.70 of the h2load
// rate at 0 ms and ≥ 0.90 at 100 ms; a 100,000-member group delivered end to end — decide, queue, send,
// record — in < 5 s; its summary-mode POST answered in < 0.5 s.
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
import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PushBridgeStore

/// One h2load run's figures.
struct H2LoadFigures {
    var requestsPerSecond: Double
    var succeeded: Int
    var status2xx: Int
}

/// Runs h2load: `requests` POSTs of `payload` over `connections` connections with up to `streams`
/// concurrent streams each.
func h2load(url: String, headers: [String], payload: [UInt8], requests: Int, connections: Int, streams: Int) -> H2LoadFigures {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-h2load-\(UUID().uuidString).json").path
    guard FileManager.default.createFile(atPath: file, contents: Data(payload)) else { fatalError("h2load: cannot write its payload to \(file)") }
    defer { try? FileManager.default.removeItem(atPath: file) }
    let output = runLoadTool(
        ["h2load", "-n", String(requests), "-c", String(connections), "-m", String(streams), "-t", "1", "-d", file] + headers.flatMap { ["-H", $0] } + [url],
        package: "nghttp2-client")
    var figures = H2LoadFigures(requestsPerSecond: 0, succeeded: 0, status2xx: 0)
    for line in output.split(separator: "\n") {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        // "finished in 1.23s, 81234.56 req/s, 9.87MB/s"
        if line.hasPrefix("finished in"), words.count > 3 { figures.requestsPerSecond = Double(words[3]) ?? 0 }
        // "requests: 100000 total, 100000 started, 100000 done, 100000 succeeded, 0 failed, ..."
        if line.hasPrefix("requests:"), let i = words.firstIndex(of: "succeeded,"), i > 0 { figures.succeeded = Int(words[i - 1]) ?? 0 }
        // "status codes: 100000 2xx, 0 3xx, 0 4xx, 0 5xx"
        if line.hasPrefix("status codes:"), words.count > 2 { figures.status2xx = Int(words[2]) ?? 0 }
    }
    return figures
}

/// One latency's figures.
struct DeliverFigures {
    var latencyMilliseconds: Int
    var ceiling: Double
    var nioHTTP2: Double
    var asyncHTTPClient: Double
    var clientAlone: Double
    var rate: Double
    var first: (postMilliseconds: Double, totalSeconds: Double)
    var summary: (postMilliseconds: Double, totalSeconds: Double)
    var connectionsOpened: Int
    var answered: Int
    var ratio: Double { rate / ceiling }
}

/// The whole delivery benchmark, at each latency; prints a table, the target lines and one JSON line.
/// - Parameters:
///   - members: the group's size.
///   - latencies: the mock's per-answer latency for each run, in milliseconds.
///   - connections: HTTP/2 connections per credential (the service's pool, and h2load's `-c`).
///   - concurrency: deliveries in flight (the service's `delivery-concurrency`; h2load's `-c × -m`).
func runDeliverBench(members: Int, latencies: [Int], connections: Int, concurrency: Int) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-deliver-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir + "/apps", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }

    // Token auth with a fresh key; the mock checks its signature.
    let credentials = try BenchCredentials(writingInto: dir)
    let (keyID, teamID, signingKey) = (credentials.keyID, credentials.teamID, credentials.signingKey)

    // The app: `members` users with one production device each, all in one group.
    let key = AccessKey.generate()
    _ = try await SQLiteAppDirectory(path: dir + "/service.sqlite").register(
        RegisteredApp(id: "bench", keyHash: AccessKey.hash(key), createdAt: Instant(milliseconds: 0)))
    let certificate = Certificate(name: "cert", busiId: nil, bundleId: "io.bench.app", environment: .production)
    do {
        let store = try SQLiteStateStore(path: dir + "/apps/bench.sqlite")
        let facade = PushFacade(store: store)
        try await facade.configure(AppConfiguration(certificates: [certificate]))
        let ids = (0..<members).map { "u\($0)" }
        try store.write { transaction in
            for (i, id) in ids.enumerated() {
                var state = UserState(user: id, displayStyle: .messageSummary, backgroundGraceSeconds: 0)
                state.devices = [Device(token: String(format: "%064x", i + 1), certificate: certificate)]
                try transaction.save(state, replacing: nil)
            }
        }
        try await facade.setMembers(["sender"] + ids, of: "big")
    }
    let streams = max(1, concurrency / connections)
    let payload = Array(#"{"aps":{"alert":{"title":"sender","body":"Standup in 5 minutes"},"badge":1,"sound":"default"},"em":{"m":"m0","f":"sender","g":"big"}}"#.utf8)

    // PUSHBRIDGE_BENCH_ONLY=service: the service's run alone, no ceilings (for a profiler; no ratio is printed).
    let serviceOnly = ProcessInfo.processInfo.environment["PUSHBRIDGE_BENCH_ONLY"] == "service"
    var runs: [DeliverFigures] = []
    for latency in latencies {
        let mock = try await MockAPNs.start(.init(
            tokenKeys: [keyID: (teamID, signingKey.publicKey)], recordsRequests: false, latency: .init(milliseconds: latency)))

        var ceiling = H2LoadFigures(requestsPerSecond: .nan, succeeded: 0, status2xx: 0)
        var (nio, ahc, clientAlone) = (Double.nan, Double.nan, Double.nan)
        if !serviceOnly {
            // The ceiling: h2load against the same mock, latency and total streams.
            let headers = credentials.h2loadHeaders
            let url = mock.baseURL + "/3/device/" + String(repeating: "ab", count: 32)
            _ = h2load(url: url, headers: headers, payload: payload, requests: min(members, 20 * concurrency), connections: connections, streams: streams)  // warm-up
            ceiling = h2load(url: url, headers: headers, payload: payload, requests: members, connections: connections, streams: streams)
            guard ceiling.status2xx == members else { fail("h2load: \(ceiling.status2xx) of \(members) answered 2xx") }
            // The HTTP/2 clients alone, same mock, same streams: swift-nio-http2 directly, then PushBridge's
            // APNsClient (async-http-client) with the service's pool settings.
            let pairs = headers.map { line in let parts = line.split(separator: ":", maxSplits: 1); return (String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces)) }
            nio = try await nioHTTP2Ceiling(
                port: mock.port, caPEM: MockAPNsCredentials.caCertificatePEM, headers: pairs,
                path: "/3/device/" + String(repeating: "ab", count: 32), payload: payload, total: members, connections: connections, streams: streams)
            ahc = try await asyncHTTPClientCeiling(
                baseURL: mock.baseURL, caFile: dir + "/ca.pem", headers: pairs, path: "/3/device/" + String(repeating: "ab", count: 32), payload: payload,
                total: members, connections: connections, concurrency: concurrency)
            let apnsClient = try APNsClient(
                endpoint: .init(baseURL: mock.baseURL, trustedCAFile: dir + "/ca.pem", requestTimeoutSeconds: 60, connectionsPerIdentity: connections),
                credentials: [APNsCredential(topics: ["*"], source: .token(keyFile: dir + "/AuthKey.p8", keyID: keyID, teamID: teamID))])
            _ = try await apnsClientCeiling(client: apnsClient, total: min(members, 20 * concurrency), concurrency: concurrency, topic: "io.bench.app", payload: payload)
            clientAlone = try await apnsClientCeiling(client: apnsClient, total: members, concurrency: concurrency, topic: "io.bench.app", payload: payload)
            await apnsClient.shutdown()
        }
        mock.clearRequests()
        let connectionsBefore = mock.connectionCount

        // The service, delivering to the mock.
        var configuration = ServiceConfiguration(host: "127.0.0.1", port: 0, database: dir, logLevel: .warning)
        configuration.requestTimeoutSeconds = 60
        configuration.delivery = credentials.delivery(mock: mock, connections: connections, concurrency: concurrency)
        let service = try PushBridgeService(configuration: configuration, vendors: [.easemob, .tencent])
        let servicePort = PortBox()
        let serviceGroup = try await start(service.application { servicePort.set($0.localAddress?.port ?? 0) }, port: servicePort)
        let base = "http://127.0.0.1:\(servicePort.value)"
        let client = HTTPClient(eventLoopGroupProvider: .singleton)

        func call(_ method: HTTPMethod, _ path: String, body: String? = nil) async throws -> (status: UInt, text: String) {
            var request = HTTPClientRequest(url: base + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(key)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(string: body))
            }
            let response = try await client.execute(request, timeout: .seconds(120))
            let text = String(buffer: try await response.body.collect(upTo: 64 << 20))
            return (response.status.code, text)
        }
        func deliveredSoFar() async throws -> (delivered: Int, other: Int) {
            var delivered = 0
            var other = 0
            for line in try await call(.GET, "/metrics").text.split(separator: "\n") where line.hasPrefix("pushbridge_deliveries_total{") {
                let count = Int(Double(line.split(separator: " ").last ?? "") ?? 0)
                if line.contains(#"outcome="delivered""#) { delivered += count } else if line.contains(#"outcome="failed""#) { other += count }
            }
            return (delivered, other)
        }

        /// One group message: the POST's latency (decide and queue) and the time until every delivery is recorded.
        func groupMessage(_ id: String, answer: String) async throws -> (postMilliseconds: Double, totalSeconds: Double) {
            let before = try await deliveredSoFar()
            let start = ContinuousClock.now
            let sent = try await call(
                .POST, "/v1/apps/bench/messages?dialect=agora-silent&answer=\(answer)",
                body: #"{"id":"\#(id)","conversationId":"big","from":"sender","to":"big","chatType":"GroupChat","body":{"type":"text","text":"Standup in 5 minutes"}}"#)
            guard sent.status == 201 else { fail("the group message was answered \(sent.status): \(sent.text.prefix(300))") }
            let posted = ContinuousClock.now - start
            let deadline = ContinuousClock.now + .seconds(180)
            while true {
                let now = try await deliveredSoFar()
                if now.other > before.other { fail("\(now.other - before.other) deliveries failed") }
                if now.delivered - before.delivered >= members { break }
                if ContinuousClock.now > deadline { fail("only \(now.delivered - before.delivered) of \(members) delivered after 180 s") }
                try await Task.sleep(for: .milliseconds(5))
            }
            return (seconds(posted) * 1000, seconds(ContinuousClock.now - start))
        }

        let first = try await groupMessage("m-\(latency)-1", answer: "decisions")
        let summary = try await groupMessage("m-\(latency)-2", answer: "summary")
        let answered = mock.answerCounts[200] ?? 0
        try await client.shutdown()
        await serviceGroup.triggerGracefulShutdown()
        let opened = mock.connectionCount - connectionsBefore
        await mock.stop()
        runs.append(DeliverFigures(
            latencyMilliseconds: latency, ceiling: ceiling.requestsPerSecond, nioHTTP2: nio, asyncHTTPClient: ahc, clientAlone: clientAlone, rate: Double(members) / summary.totalSeconds, first: first,
            summary: summary, connectionsOpened: opened, answered: answered))
    }

    print("pushbridge-bench --deliver: \(members)-member group, token auth, HTTP/2 over TLS on loopback; \(connections) connections × \(streams) streams "
        + "(service: apns-connections \(connections), delivery-concurrency \(concurrency); h2load -c \(connections) -m \(streams))")
    for run in runs {
        let deliveryTarget = run.latencyMilliseconds == 0 ? 0.70 : 0.90
        // The group's time, judged against h2load's for as many requests on the same mock (a same-run
        // ratio: an absolute time would judge the machine, and at 100 ms h2load alone takes longer than 5 s here).
        let ceilingSeconds = Double(members) / run.ceiling
        let totalTarget = ceilingSeconds / deliveryTarget
        let judged = members >= 100_000
        func verdict(_ met: Bool) -> String { !judged ? "not judged below 100,000 members" : met ? "met" : "NOT MET" }
        print("— mock latency \(run.latencyMilliseconds) ms")
        print(String(format: "  h2load → mock APNs (ceiling, same payload)            %10.0f deliveries/s", run.ceiling))
        print(String(format: "  client alone: bare swift-nio-http2 streams            %8.0f deliveries/s  ratio %.2f", run.nioHTTP2, run.nioHTTP2 / run.ceiling))
        print(String(format: "  client alone: async-http-client (before 0.20)         %8.0f deliveries/s  ratio %.2f", run.asyncHTTPClient, run.asyncHTTPClient / run.ceiling))
        print(String(format: "  client alone: APNsClient (swift-nio-http2, its pool)  %8.0f deliveries/s  ratio %.2f", run.clientAlone, run.clientAlone / run.ceiling))
        print(String(format: "  service → mock APNs (decide, queue, send, record)     %10.0f deliveries/s  ratio %.2f (target ≥ %.2f: %@)", run.rate, run.ratio,
            deliveryTarget, run.ratio >= deliveryTarget ? "met" : "NOT MET"))
        print(String(format: "  group of %d, answer=decisions: POST answered in %.0f ms, all recorded in %.2f s", members, run.first.postMilliseconds,
            run.first.totalSeconds))
        print(String(format: "  group of %d, answer=summary: POST answered in %.0f ms (target < 0.5 s: %@), all recorded in %.2f s (h2load's %d requests: %.2f s; target ≤ %.2f s, h2load's ÷ %.2f: %@)",
            members, run.summary.postMilliseconds, verdict(run.summary.postMilliseconds < 500), run.summary.totalSeconds, members, ceilingSeconds, totalTarget,
            deliveryTarget, run.ceiling.isNaN ? "not judged without h2load" : verdict(run.summary.totalSeconds <= totalTarget)))
        print("  the service opened \(run.connectionsOpened) connections; the mock answered 200 to \(run.answered) requests (\(2 * members) expected; more means a delivery was sent twice)")
    }
    /// A figure, or `null` where it was not measured (`PUSHBRIDGE_BENCH_ONLY=service`).
    func measured(_ value: Double, places: Double = 1) -> JSONValue { value.isNaN ? .null : .double((value * places).rounded() / places) }
    var w = JSONWriter()
    w.write(.array(runs.map { run in
        .object(JSONObject([
            ("latency_ms", .int(Int64(run.latencyMilliseconds))), ("h2load_rps", measured(run.ceiling)),
            ("nio_http2_rps", measured(run.nioHTTP2)), ("async_http_client_rps", measured(run.asyncHTTPClient)),
            ("apns_client_rps", measured(run.clientAlone)),
            ("service_deliveries_per_second", .double(run.rate.rounded())), ("ratio", measured(run.ratio, places: 1000)),
            ("group_members", .int(Int64(members))), ("decisions_post_ms", .double(run.first.postMilliseconds.rounded())),
            ("decisions_total_s", .double((run.first.totalSeconds * 100).rounded() / 100)), ("summary_post_ms", .double(run.summary.postMilliseconds.rounded())),
            ("summary_total_s", .double((run.summary.totalSeconds * 100).rounded() / 100)),
        ]))
    }))
    print(w.string)
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
