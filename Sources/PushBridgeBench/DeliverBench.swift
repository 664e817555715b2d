// `make bench-deliver`: the service delivering into the mock APNs on loopback, and h2load driving the same
// mock in the same run as the ceiling (issue 16's targets: ≥ 50 % of the h2load rate; a 100,000-member
// group delivered end to end — decide, queue, send, record — in < 10 s).
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
import PushBridgeServer
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
    FileManager.default.createFile(atPath: file, contents: Data(payload))
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

/// The whole delivery benchmark; prints a table and one JSON line.
func runDeliverBench(members: Int) async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-deliver-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir + "/apps", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }

    // Token auth with a fresh key; the mock checks its signature.
    let keyID = "BENCHKEY01"
    let teamID = "BENCHTEAM1"
    let signingKey = P256.Signing.PrivateKey()
    try signingKey.pemRepresentation.write(toFile: dir + "/AuthKey.p8", atomically: true, encoding: .utf8)
    try MockAPNsCredentials.caCertificatePEM.write(toFile: dir + "/ca.pem", atomically: true, encoding: .utf8)
    try """
        - topics: ["*"]
          key-file: AuthKey.p8
          key-id: \(keyID)
          team-id: \(teamID)
        """.write(toFile: dir + "/credentials.yaml", atomically: true, encoding: .utf8)
    let mock = try await MockAPNs.start(.init(tokenKeys: [keyID: (teamID, signingKey.publicKey)], recordsRequests: false))

    // The app: `members` users with one production device each, all in one group.
    let key = AccessKey.generate()
    _ = try SQLiteAppDirectory(path: dir + "/service.sqlite").register(
        RegisteredApp(id: "bench", keyHash: AccessKey.hash(key), createdAt: Instant(milliseconds: 0)))
    let certificate = Certificate(name: "cert", busiId: nil, bundleId: "io.bench.app", environment: .production)
    do {
        let store = try SQLiteStateStore(path: dir + "/apps/bench.sqlite")
        let facade = PushFacade(store: store)
        try facade.configure(AppConfiguration(certificates: [certificate]))
        let ids = (0..<members).map { "u\($0)" }
        try store.write { transaction in
            for (i, id) in ids.enumerated() {
                var state = UserState(user: id, displayStyle: .messageSummary, backgroundGraceSeconds: 0)
                state.devices = [Device(token: String(format: "%064x", i + 1), certificate: certificate)]
                try transaction.save(state, replacing: nil)
            }
        }
        try facade.setMembers(["sender"] + ids, of: "big")
    }

    // The ceiling: h2load against the same mock, one connection with the streams the service uses.
    let concurrency = 256
    let payload = Array(#"{"aps":{"alert":{"title":"sender","body":"Standup in 5 minutes"},"badge":1,"sound":"default"},"em":{"m":"m0","f":"sender","g":"big"}}"#.utf8)
    let jwt = ProviderTokenSigner(key: signingKey, keyID: keyID, teamID: teamID).token(now: Int64(Date().timeIntervalSince1970)).jwt
    let headers = ["authorization: bearer \(jwt)", "apns-topic: io.bench.app", "apns-push-type: alert", "apns-priority: 10", "apns-expiration: 0"]
    _ = h2load(url: mock.baseURL + "/3/device/" + String(repeating: "ab", count: 32), headers: headers, payload: payload, requests: 10_000,
        connections: 1, streams: concurrency)  // warm-up
    let ceiling = h2load(url: mock.baseURL + "/3/device/" + String(repeating: "ab", count: 32), headers: headers, payload: payload,
        requests: members, connections: 1, streams: concurrency)
    guard ceiling.status2xx == members else { fail("h2load: \(ceiling.status2xx) of \(members) answered 2xx") }
    mock.clearRequests()

    // The service, delivering to the mock.
    var configuration = ServiceConfiguration(host: "127.0.0.1", port: 0, database: dir, logLevel: .warning)
    configuration.requestTimeoutSeconds = 60
    var delivery = ServiceConfiguration.Delivery(credentialsFile: dir + "/credentials.yaml")
    delivery.apnsURL = mock.baseURL
    delivery.caFile = dir + "/ca.pem"
    delivery.concurrency = concurrency
    configuration.delivery = delivery
    let service = try PushBridgeService(configuration: configuration)
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
            if line.contains(#"outcome="delivered""#) { delivered = count } else if line.contains(#"outcome="failed""#) { other += count }
        }
        return (delivered, other)
    }

    /// One group message: the POST's latency (decide and queue) and the time until every delivery is recorded.
    func groupMessage(_ id: String) async throws -> (postMilliseconds: Double, totalSeconds: Double) {
        let before = try await deliveredSoFar()
        let start = ContinuousClock.now
        let sent = try await call(
            .POST, "/v1/apps/bench/messages?dialect=agora-silent",
            body: #"{"id":"\#(id)","conversationId":"big","from":"sender","to":"big","chatType":"GroupChat","body":{"type":"text","text":"Standup in 5 minutes"}}"#)
        guard sent.status == 201 else { fail("the group message was answered \(sent.status): \(sent.text.prefix(300))") }
        let posted = ContinuousClock.now - start
        let deadline = ContinuousClock.now + .seconds(120)
        while true {
            let now = try await deliveredSoFar()
            if now.other > before.other { fail("\(now.other - before.other) deliveries failed") }
            if now.delivered - before.delivered >= members { break }
            if ContinuousClock.now > deadline { fail("only \(now.delivered - before.delivered) of \(members) delivered after 120 s") }
            try await Task.sleep(for: .milliseconds(5))
        }
        return (seconds(posted) * 1000, seconds(ContinuousClock.now - start))
    }

    let cold = try await groupMessage("m1")
    let warm = try await groupMessage("m2")
    let answered = mock.answerCounts[200] ?? 0
    try await client.shutdown()
    await serviceGroup.triggerGracefulShutdown()
    await mock.stop()

    let rate = Double(members) / warm.totalSeconds
    let ratio = rate / ceiling.requestsPerSecond
    let worst = max(cold.totalSeconds, warm.totalSeconds)
    print("pushbridge-bench --deliver: \(members)-member group, token auth, HTTP/2 over TLS on loopback, \(concurrency) streams on one connection")
    print(String(format: "h2load → mock APNs (ceiling, same payload)      %10.0f deliveries/s", ceiling.requestsPerSecond))
    print(String(format: "service → mock APNs (decide, queue, send, record) %8.0f deliveries/s  ratio %.2f (target ≥ 0.50: %@)", rate, ratio,
        ratio >= 0.5 ? "met" : "NOT MET"))
    print(String(format: "group of %d, first message: POST answered in %.0f ms, all recorded in %.2f s", members, cold.postMilliseconds, cold.totalSeconds))
    print(String(format: "group of %d, second message: POST answered in %.0f ms, all recorded in %.2f s (target < 10 s: %@)", members,
        warm.postMilliseconds, warm.totalSeconds, members < 100_000 ? "not judged below 100,000 members" : worst < 10 ? "met" : "NOT MET"))
    print("mock answered 200 to \(answered) requests (\(2 * members) expected; more means a delivery was sent twice)")
    var w = JSONWriter()
    w.write(.object(JSONObject([
        ("h2load_rps", .double(ceiling.requestsPerSecond.rounded())), ("service_deliveries_per_second", .double(rate.rounded())),
        ("ratio", .double((ratio * 1000).rounded() / 1000)), ("group_members", .int(Int64(members))),
        ("first_post_ms", .double(cold.postMilliseconds.rounded())), ("first_total_s", .double((cold.totalSeconds * 100).rounded() / 100)),
        ("second_post_ms", .double(warm.postMilliseconds.rounded())), ("second_total_s", .double((warm.totalSeconds * 100).rounded() / 100)),
    ])))
    print(w.string)
}

/// A duration in seconds.
func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}
