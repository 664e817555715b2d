// `make bench-serve`: wrk on loopback against the service and against a constant Hummingbird handler in
// the same run. Targets: one-to-one ingest ≥ 0.5 of the constant handler's rate with p99 < 10 ms at 64
// connections; Easemob and Tencent REST ≥ 0.9 of the native one-to-one rate; a 1,000-member group message
// answered in < 20 ms p99.
import Foundation
import Hummingbird
import Logging
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeEasemob
import PushBridgeServer
import PushBridgeTencent
import PushBridgeStore
import PushBridgeVendorREST
import ServiceLifecycle

/// One wrk run's figures.
struct WrkFigures {
    var requestsPerSecond: Double
    var p50ms: Double
    var p99ms: Double
    var requests: Int
    var non2xx: Int
    var errors: Int
}

/// Runs wrk with a Lua script that posts `body` (with `%ID%` replaced by a unique id per request, and
/// `%N%` by a unique 32-bit number from `numbers` on: Tencent's `MsgRandom`; `%R%` by one of `0..<receivers`,
/// spread over the requests). With `paths`, the requests go to each path in turn, with its key (one
/// client spread over several apps, as one client is over one app).
func wrk(
    url: String, body: String, connections: Int, seconds: Int, key: String?, numbers: Int = 0, idPrefix: String = "w", timeoutSeconds: Int = 2, receivers: Int = 1,
    spreadOver paths: [(path: String, key: String)] = []
) -> WrkFigures {
    let script = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-wrk-\(UUID().uuidString).lua").path
    func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'" }
    let escaped = body.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    // Requests spread over several paths (apps), each with its own key: a request's path in turn.
    let spread = paths.isEmpty ? "" : """
        local paths = { \(paths.map { quoted($0.path) }.joined(separator: ", ")) }
        local keys = { \(paths.map { quoted("Bearer " + $0.key) }.joined(separator: ", ")) }
        """
    let format = paths.isEmpty
        ? "wrk.format(nil, nil, nil, text)"
        : "wrk.format(nil, paths[pick], { [\"Content-Type\"] = \"application/json\", [\"Authorization\"] = keys[pick] }, text)"
    let lua = """
        local threads = 0
        function setup(thread) threads = threads + 1; thread:set("tid", threads) end
        function init(args) counter = 0 end
        local template = '\(escaped)'
        wrk.method = "POST"
        wrk.headers["Content-Type"] = "application/json"
        \(key.map { "wrk.headers[\"Authorization\"] = \"Bearer \($0)\"" } ?? "")
        \(spread)
        function request()
          counter = counter + 1
          local id = "\(idPrefix)" .. tid .. "-" .. counter .. "-" .. os.time()
          local n = string.format("%d", \(numbers) + tid * 100000000 + counter)
          local r = string.format("%d", (tid * 7919 + counter * 104729) % \(max(1, receivers)))
          local pick = (tid + counter) % \(max(1, paths.count)) + 1
          local text = (string.gsub((string.gsub((string.gsub(template, "%%ID%%", id)), "%%N%%", n)), "%%R%%", r))
          return \(format)
        end
        """
    guard FileManager.default.createFile(atPath: script, contents: Data(lua.utf8)) else { fatalError("wrk: cannot write its script to \(script)") }
    defer { try? FileManager.default.removeItem(atPath: script) }
    let output = runLoadTool(
        ["wrk", "-t", String(min(2, connections)), "-c", String(connections), "-d", "\(seconds)s", "--timeout", "\(timeoutSeconds)s", "--latency", "-s", script, url], package: "wrk")
    func milliseconds(_ text: Substring) -> Double {
        let units: [(String, Double)] = [("us", 0.001), ("ms", 1), ("s", 1000), ("m", 60_000)]
        for (unit, factor) in units where text.hasSuffix(unit) { return (Double(text.dropLast(unit.count)) ?? .nan) * factor }
        return .nan
    }
    var figures = WrkFigures(requestsPerSecond: 0, p50ms: .nan, p99ms: .nan, requests: 0, non2xx: 0, errors: 0)
    for line in output.split(separator: "\n") {
        let words = line.split(separator: " ", omittingEmptySubsequences: true)
        if line.hasPrefix("Requests/sec:"), let v = words.last.flatMap({ Double($0) }) { figures.requestsPerSecond = v }
        if words.count == 2, words[0] == "50%" { figures.p50ms = milliseconds(words[1]) }
        if words.count == 2, words[0] == "99%" { figures.p99ms = milliseconds(words[1]) }
        if line.contains("requests in"), let n = words.first.flatMap({ Int($0) }) { figures.requests = n }
        if line.contains("Non-2xx or 3xx responses:"), let n = words.last.flatMap({ Int($0) }) { figures.non2xx = n }
        if line.contains("Socket errors:") { figures.errors = words.compactMap { Int($0.trimmingCharacters(in: .punctuationCharacters)) }.reduce(0, +) }
    }
    return figures
}

/// Runs a load tool found on the PATH and returns its standard output; fails the benchmark if it
/// cannot run or exits non-zero.
/// - Parameters:
///   - arguments: the tool and its arguments.
///   - package: the Debian package that has it (named in the error).
func runLoadTool(_ arguments: [String], package: String) -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { fail("cannot run \(arguments[0]) (install it: apt-get install \(package)): \(error)") }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { fail("\(arguments[0]) failed:\n\(output)") }
    return output
}

/// Starts an application on a free loopback port; returns the port and the group that stops it.
func start(_ app: some ApplicationProtocol & Sendable, port: PortBox) async throws -> ServiceGroup {
    let group = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: Logger(label: "bench")))
    Task { try await group.run() }
    while port.value == 0 { try await Task.sleep(for: .milliseconds(10)) }
    return group
}

final class PortBox: @unchecked Sendable {
    private let lock = NSLock()
    private var port = 0
    var value: Int { lock.withLock { port } }
    func set(_ value: Int) { lock.withLock { port = value } }
}

/// The whole serve benchmark; prints a table and one JSON line.
func runServeBench(seconds: Int) async throws {
    // State: an app with 1,000 users, each with a device, in one group; written through the facade
    // before the service opens the store (the same file it then serves).
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-serve-bench-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: dir + "/apps", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let key = AccessKey.generate()
    _ = try await SQLiteAppDirectory(path: dir + "/service.sqlite").register(
        RegisteredApp(id: "bench", keyHash: AccessKey.hash(key), createdAt: Instant(milliseconds: 0)))
    do {
        let facade = PushFacade(store: try SQLiteStateStore(path: dir + "/apps/bench.sqlite"))
        try await facade.configure(AppConfiguration(certificates: [Certificate(name: "cert", busiId: nil, bundleId: "io.bench.app", environment: .production)]))
        let now = Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        var members: [UserID] = []
        for i in 0..<1_000 {
            let user = "u\(i)"
            let token = String(repeating: String(format: "%08x", i), count: 8)
            let calls: [PushFacade.DialectCall] = [
                .init(.object(JSONObject([("call", .string("initializeSDK")), ("appkey", .string("1#1")), ("apnsCertName", .string("cert"))])), at: now, pointer: .root),
                .init(.object(JSONObject([("call", .string("registerForRemoteNotificationsWithDeviceToken")), ("deviceToken", .string(token))])), at: now, pointer: .root),
            ]
            _ = try await facade.apply(calls, dialect: "agora-silent", user: user)
            members.append(user)
        }
        try await facade.setMembers(members, of: "g1000")
    }
    // The vendors' REST on the same app: an Easemob binding with a token, a Tencent one with a UserSig.
    let directory = try SQLiteAppDirectory(path: dir + "/service.sqlite")
    let signingKey = (0..<32).map { _ in UInt8.random(in: 0...255) }
    _ = try await directory.bind(
        VendorBinding(app: "bench", vendor: .easemob, key: "bench/bench", account: "id", secret: AccessKey.hash("secret"), signingKey: signingKey,
            tokenSeconds: 3600, boundAt: Instant(milliseconds: 0)))
    _ = try await directory.bind(VendorBinding(app: "bench", vendor: .tencent, key: "1400000000", account: "administrator", secret: Array("bench-key".utf8), boundAt: Instant(milliseconds: 0)))
    let nowSeconds = Int64(Date().timeIntervalSince1970)
    let appToken = AppToken.issue(signingKey: signingKey, expiresAt: Instant(milliseconds: (nowSeconds + 3600) * 1000))
    let userSig = UserSig.generate(sdkAppID: 1_400_000_000, identifier: "administrator", secretKey: "bench-key", time: nowSeconds, expire: 3600)

    if ProcessInfo.processInfo.environment["PUSHBRIDGE_BENCH_ONLY"] == "writer" {  // the writer's share alone
        let store = try SQLiteStateStore(path: dir + "/apps/bench.sqlite")
        let n = 20_000
        let start = ContinuousClock.now
        let facade = PushFacade(store: store)
        for batch in stride(from: 0, to: n, by: 64) {
            // As the service's writer does: a run of sends is one facade batch, one update.
            let prepared = try (batch..<min(n, batch + 64)).map { i in
                try facade.prepare(
                    JSONParser.parse(#"{"id":"x\#(i)","conversationId":"u1","from":"u0","to":"u1","chatType":"Chat","body":{"type":"text","text":"hello"}}"#),
                    dialect: "agora-silent", now: Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
            }
            _ = try await facade.send(prepared).map { try $0.get() }
        }
        let elapsed = ContinuousClock.now - start
        print("writer alone: \(n) one-to-one sends in \(elapsed), \(Double(n) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)) /s")
        return
    }

    var configuration = ServiceConfiguration(host: "127.0.0.1", port: 0, database: dir, logLevel: .warning)
    configuration.requestTimeoutSeconds = 30
    let service = try PushBridgeService(configuration: configuration, vendors: [.easemob, .tencent])
    let servicePort = PortBox()
    let serviceGroup = try await start(service.application { servicePort.set($0.localAddress?.port ?? 0) }, port: servicePort)

    let router = Router()
    let constant = ByteBuffer(string: #"{"message":"constant","decisions":[]}"#)
    router.post("/constant") { _, _ in Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: constant)) }
    let baselinePort = PortBox()
    let baseline = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
        onServerRunning: { baselinePort.set($0.localAddress?.port ?? 0) }, logger: Logger(label: "baseline"))
    let baselineGroup = try await start(baseline, port: baselinePort)

    let oneToOne = #"{"id":"%ID%","conversationId":"u1","from":"u0","to":"u1","chatType":"Chat","body":{"type":"text","text":"hello"}}"#
    let group = #"{"id":"%ID%","conversationId":"g1000","from":"u0","to":"g1000","chatType":"GroupChat","body":{"type":"text","text":"hello"}}"#
    let messages = "http://127.0.0.1:\(servicePort.value)/v1/apps/bench/messages?dialect=agora-silent"
    func easemob() -> WrkFigures {
        wrk(url: "http://127.0.0.1:\(servicePort.value)/bench/bench/messages/users", body: #"{"from":"u0","to":["u1"],"type":"txt","body":{"msg":"hello"}}"#,
            connections: 64, seconds: seconds, key: appToken)
    }
    func tencent() -> WrkFigures {
        wrk(url: "http://127.0.0.1:\(servicePort.value)/v4/openim/sendmsg?sdkappid=1400000000&identifier=administrator&usersig=\(userSig)&random=1&contenttype=json",
            body: #"{"From_Account":"u0","To_Account":"u1","MsgRandom":%N%,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"hello"}}]}"#,
            connections: 64, seconds: seconds, key: nil, numbers: 400_000_000)
    }
    print("pushbridge-bench --serve: wrk, 2 threads, \(seconds) s per run, loopback (server and wrk share the machine's cores)")
    _ = wrk(url: messages, body: oneToOne, connections: 8, seconds: 1, key: key)  // warm-up
    if let only = ProcessInfo.processInfo.environment["PUSHBRIDGE_BENCH_ONLY"] {  // one run, for a profiler
        let shapes = ["one", "group", "easemob", "tencent"]
        guard shapes.contains(only) else { fail("PUSHBRIDGE_BENCH_ONLY=\(only): expected one of \(shapes.joined(separator: ", "))") }
        FileHandle.standardError.write(Data("start \(only) pid \(getpid())\n".utf8))
        switch only {
        case "group": print(wrk(url: messages, body: group, connections: 1, seconds: seconds, key: key))
        case "easemob": print(easemob())
        case "tencent": print(tencent())
        default: print(wrk(url: messages, body: oneToOne, connections: 64, seconds: seconds, key: key))
        }
        return
    }
    // The baseline runs before and after the one-to-one run and counts as the mean of both, so that
    // the machine's drift within a run (10–30 % here) falls on both sides of the ratio alike.
    let constantBefore = wrk(url: "http://127.0.0.1:\(baselinePort.value)/constant", body: oneToOne, connections: 64, seconds: seconds, key: nil)
    let oneRun = wrk(url: messages, body: oneToOne, connections: 64, seconds: seconds, key: key)
    let constantAfter = wrk(url: "http://127.0.0.1:\(baselinePort.value)/constant", body: oneToOne, connections: 64, seconds: seconds, key: nil)
    var constantRun = constantBefore
    constantRun.requestsPerSecond = (constantBefore.requestsPerSecond + constantAfter.requestsPerSecond) / 2
    constantRun.p50ms = (constantBefore.p50ms + constantAfter.p50ms) / 2
    constantRun.p99ms = max(constantBefore.p99ms, constantAfter.p99ms)
    constantRun.non2xx = constantBefore.non2xx + constantAfter.non2xx
    // The vendors' REST next to the native run they are compared with, before the group run grows the
    // database by a thousand decisions a message.
    let easemobRun = easemob()
    let tencentRun = tencent()
    let groupRun = wrk(url: messages, body: group, connections: 1, seconds: seconds, key: key)

    await serviceGroup.triggerGracefulShutdown()
    await baselineGroup.triggerGracefulShutdown()

    let ratio = oneRun.requestsPerSecond / constantRun.requestsPerSecond
    func row(_ name: String, _ f: WrkFigures, _ target: String) -> String {
        name.padding(toLength: 44, withPad: " ", startingAt: 0)
            + String(format: "%10.0f/s  p50 %7.2f ms  p99 %7.2f ms  non-2xx %d  errors %d  %@", f.requestsPerSecond, f.p50ms, f.p99ms, f.non2xx, f.errors, target)
    }
    print(row("constant handler (64 connections)", constantRun,
        String(format: "baseline: the mean of a run before (%.0f/s) and after (%.0f/s) the one-to-one run", constantBefore.requestsPerSecond, constantAfter.requestsPerSecond)))
    print(row("one-to-one messages (64 connections)", oneRun,
        String(format: "ratio %.2f (target ≥ 0.50: %@), p99 target < 10 ms: %@", ratio, ratio >= 0.5 ? "met" : "NOT MET", oneRun.p99ms < 10 ? "met" : "NOT MET")))
    let easemobRatio = easemobRun.requestsPerSecond / oneRun.requestsPerSecond
    let tencentRatio = tencentRun.requestsPerSecond / oneRun.requestsPerSecond
    print(row("Easemob REST /messages/users (64 connections)", easemobRun,
        String(format: "%.2f of the native one-to-one rate (target ≥ 0.90: %@)", easemobRatio, easemobRatio >= 0.9 ? "met" : "NOT MET")))
    print(row("Tencent REST sendmsg (64 connections)", tencentRun,
        String(format: "%.2f of the native one-to-one rate (target ≥ 0.90: %@; one UserSig, verified once and remembered)", tencentRatio, tencentRatio >= 0.9 ? "met" : "NOT MET")))
    print(row("1,000-member group messages (1 connection)", groupRun,
        String(format: "%.0f decisions/s, p99 target < 20 ms: %@", groupRun.requestsPerSecond * 999, groupRun.p99ms < 20 ? "met" : "NOT MET")))
    var w = JSONWriter()
    w.write(.object(JSONObject([
        ("constant_rps", .double(constantRun.requestsPerSecond)),
        ("one_to_one_rps", .double(oneRun.requestsPerSecond)), ("one_to_one_p50_ms", .double(oneRun.p50ms)), ("one_to_one_p99_ms", .double(oneRun.p99ms)),
        ("one_to_one_ratio", .double((ratio * 1000).rounded() / 1000)),
        ("group_1000_rps", .double(groupRun.requestsPerSecond)), ("group_1000_p50_ms", .double(groupRun.p50ms)), ("group_1000_p99_ms", .double(groupRun.p99ms)),
        ("easemob_rest_rps", .double(easemobRun.requestsPerSecond)), ("easemob_rest_p99_ms", .double(easemobRun.p99ms)),
        ("easemob_rest_ratio", .double((easemobRatio * 1000).rounded() / 1000)),
        ("tencent_rest_rps", .double(tencentRun.requestsPerSecond)), ("tencent_rest_p99_ms", .double(tencentRun.p99ms)),
        ("tencent_rest_ratio", .double((tencentRatio * 1000).rounded() / 1000)),
        ("non_2xx", .int(Int64(oneRun.non2xx + groupRun.non2xx + constantRun.non2xx + easemobRun.non2xx + tencentRun.non2xx))),
    ])))
    print(w.string)
    if oneRun.non2xx + groupRun.non2xx + easemobRun.non2xx + tencentRun.non2xx > 0 { fail("the service answered non-2xx responses under load") }
}
