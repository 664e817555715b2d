// pushbridge-bench: release-build throughput figures, each measured against a baseline in the same run.
// `make bench` builds it in release and runs it from the repository root. It prints a table and, last,
// one JSON object. Per core: everything runs on one thread, and each figure is the median of several runs.
import Foundation
import PushBridgePostgres
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore

let arguments = CommandLine.arguments
let fixturesRoot = arguments.firstIndex(of: "--fixtures").map { arguments[$0 + 1] } ?? "Fixtures"
let rounds = arguments.firstIndex(of: "--rounds").map { Int(arguments[$0 + 1]) ?? 5 } ?? 5

/// Median of `rounds` timings of `body`, in seconds.
func median(_ rounds: Int, _ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return times.sorted()[times.count / 2]
}

/// Median of `rounds` timings of awaited `body`, in seconds.
func median(_ rounds: Int, _ body: () async throws -> Void) async rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<rounds {
        let start = DispatchTime.now().uptimeNanoseconds
        try await body()
        times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
    return times.sorted()[times.count / 2]
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("pushbridge-bench: " + message + "\n").utf8))
    exit(2)
}

/// Temporary folders made by this run, removed at every exit (`exit`, failures, Ctrl-C, SIGTERM).
nonisolated(unsafe) var temporaryFolders: [String] = []
func makeTemporaryFolder(_ prefix: String) throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    temporaryFolders.append(folder.path)
    return folder
}
atexit { for folder in temporaryFolders { try? FileManager.default.removeItem(atPath: folder) } }
signal(SIGINT) { _ in exit(130) }
signal(SIGTERM) { _ in exit(143) }

/// Runs an async benchmark, then exits (2 with the error if it threw).
func runToCompletion(_ body: () async throws -> Void) async -> Never {
    do { try await body() } catch { fail("\(error)") }
    exit(0)
}

if let index = arguments.firstIndex(of: "--compare") {  // `make bench-compare REF=…`: this bench against a reference's, alternated
    // `--compare REFERENCE_BENCH --reference-folder ITS_CHECKOUT [--reference-name NAME] [--sections core,serve,deliver]
    // [--compare-rounds 3] [--seconds 10]`
    guard index + 1 < arguments.count else { fail("--compare needs the reference's bench executable") }
    func option(_ name: String) -> String? { arguments.firstIndex(of: name).flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil } }
    let referenceFolder = option("--reference-folder") ?? "."
    let sectionNames = option("--sections")?.split(separator: ",").map(String.init) ?? CompareSection.defaults.map(\.rawValue)
    let sections = sectionNames.map { name -> CompareSection in
        guard let section = CompareSection(rawValue: name) else {
            fail("--sections: no section \(name) (the sections: \(CompareSection.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return section
    }
    let roundsText = option("--compare-rounds") ?? "3"
    guard let compareRounds = Int(roundsText), compareRounds > 0 else { fail("--compare-rounds: expected a number of rounds (1 or more), found \(roundsText)") }
    let flagged = compareBenches(
        current: BenchUnderTest(name: option("--current-name") ?? "current", executable: CommandLine.arguments[0], folder: FileManager.default.currentDirectoryPath),
        reference: BenchUnderTest(name: option("--reference-name") ?? "reference", executable: arguments[index + 1], folder: referenceFolder),
        sections: sections, rounds: compareRounds, seconds: option("--seconds").flatMap { Int($0) } ?? 10)
    exit(flagged.isEmpty ? 0 : 1)
}

if arguments.contains("--serve") {  // `make bench-serve`: the HTTP service under wrk
    let seconds = arguments.firstIndex(of: "--seconds").map { Int(arguments[$0 + 1]) ?? 10 } ?? 10
    await runToCompletion { try await runServeBench(seconds: seconds) }
}

if arguments.contains("--postgres") {  // `make bench-postgres`: several nodes on one PostgreSQL
    let seconds = arguments.firstIndex(of: "--seconds").map { Int(arguments[$0 + 1]) ?? 10 } ?? 10
    let members = arguments.firstIndex(of: "--members").map { Int(arguments[$0 + 1]) ?? 100_000 } ?? 100_000
    if arguments.contains("--only-round-trips") {  // one statement's round trip alone
        await runToCompletion {
            guard let url = ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"] else { fail("no PostgreSQL: run it through Tests/Scripts/with-postgres.sh") }
            let trip = try await statementRoundTrip(try PostgresLocation(url: url), statements: 20_000)
            print(String(format: "a statement's round trip, awaited: %.0f µs, %.0f µs of CPU", trip.wall, trip.cpu))
        }
    }
    await runToCompletion { try await runPostgresBench(seconds: seconds, members: members, onlyFanOut: arguments.contains("--only-fanout")) }
}

if arguments.contains("--campaign") {  // `make bench-campaign`: a push task to every user of a large app, into the mock APNs
    // `--users 1000000`, `--latency 100`, `--connections 4`, `--concurrency 2000`, `--page-size` (the service's default), `--seconds 300` (a store's run at most),
    // `--rate 0` (push-task-rate: receivers a second, 0 for no limit).
    func number(_ name: String, _ otherwise: Int) -> Int { arguments.firstIndex(of: name).map { Int(arguments[$0 + 1]) ?? otherwise } ?? otherwise }
    await runToCompletion {
        try await runCampaignBench(
            users: number("--users", 1_000_000), latency: number("--latency", 100), connections: number("--connections", 4),
            concurrency: number("--concurrency", 2_000), pageSize: number("--page-size", ServiceConfiguration().pushTaskPageSize), rate: number("--rate", 0), limit: number("--seconds", 300))
    }
}

if arguments.contains("--deliver") {  // `make bench-deliver`: the service into the mock APNs, beside h2load
    // `--latency 0,100` (milliseconds per answer), `--connections 4`, `--concurrency 2000`.
    let members = arguments.firstIndex(of: "--members").map { Int(arguments[$0 + 1]) ?? 100_000 } ?? 100_000
    let latencies = arguments.firstIndex(of: "--latency").map { arguments[$0 + 1].split(separator: ",").compactMap { Int($0) } } ?? [0, 100]
    let connections = arguments.firstIndex(of: "--connections").map { Int(arguments[$0 + 1]) ?? 4 } ?? 4
    let concurrency = arguments.firstIndex(of: "--concurrency").map { Int(arguments[$0 + 1]) ?? 2_000 } ?? 2_000
    await runToCompletion { try await runDeliverBench(members: members, latencies: latencies, connections: connections, concurrency: concurrency) }
}


if arguments.contains("--only-decide") {  // for profiling the hot path alone (perf, callgrind): the traffic mix, 50 passes
    // `--only-decide KIND` decides one kind of the mix alone (say `one-to-one`).
    let kindIndex = arguments.firstIndex(of: "--only-decide")! + 1
    let only = kindIndex < arguments.count && !arguments[kindIndex].hasPrefix("--") ? arguments[kindIndex] : nil
    let mix = TrafficMix.make(decisions: 20_000).filter { only == nil || $0.name == only }
    var pushed = 0
    let seconds = median(1) { for _ in 0..<50 { for kind in mix { pushed += decide(kind.messages).pushed } } }
    print("decide_render_per_pushed_payload \(Int(Double(pushed) / seconds))")
    exit(0)
}

if arguments.contains("--only-one-to-one") {  // for profiling the one-to-one sends alone
    var runs: [Int] = []
    for _ in 0..<3 { runs.append(Int(try await oneToOneThroughFacade(messages: 40_000, batch: 64))) }
    print("one_to_one_facade_batched_per_sec \(runs.sorted()[1]) (runs \(runs))")
    exit(0)
}

// MARK: - Fan-out: one group message to 100,000 members, state in SQLite, end to end (run first: its peak RSS is the process's).
// (`FanOutBench.swift`)
let fanout = try await fanOut(members: 100_000, rounds: max(3, rounds))
let fanoutPeakRSS = peakRSSMegabytes()
if fanout.decisions != 99_999 { fail("fan-out: \(fanout.decisions) decisions for 100,000 members") }
if arguments.contains("--only-fanout") {  // for profiling the fan-out alone
    print("fanout first_ms \(Int(fanout.firstMs)) warm_ms \(Int(fanout.warmMs)) load_ms \(Int(fanout.loadMs)) badge_write_ms \(Int(fanout.badgeWriteMs)) fold_ms \(Int(fanout.foldMs)) record_bytes \(fanout.recordBytes) repeat_ms \(Int(fanout.repeatMs)) write_out_ms \(Int(fanout.writeOutMs)) free_ms \(Int(fanout.freeMs)) pushed \(fanout.pushed) peak_rss_mb \(Int(fanoutPeakRSS))")
    exit(0)
}

// MARK: - The traffic mix: decide + render per pushed payload, per kind of traffic

let mix = TrafficMix.make(decisions: 20_000)
var sink = 0
struct KindFigures {
    var name: String
    var summary: String
    var tally: MixTally
    var seconds: Double
    var perPushedPayload: Double { Double(tally.pushed) / seconds }
    var decisionsPerSec: Double { Double(tally.decisions) / seconds }
}
var kinds: [KindFigures] = []
for kind in mix {
    let tally = decide(kind.messages, keeping: true)  // also the payloads the baselines write
    let seconds = median(rounds) { sink &+= decide(kind.messages).payloadBytes }
    kinds.append(KindFigures(name: kind.name, summary: kind.summary, tally: tally, seconds: seconds))
}
let mixSeconds = kinds.reduce(0) { $0 + $1.seconds }
let mixPushed = kinds.reduce(0) { $0 + $1.tally.pushed }
let mixDecisions = kinds.reduce(0) { $0 + $1.tally.decisions }
let mixSuppressed = kinds.reduce(0) { $0 + $1.tally.suppressed }
let decideRenderPerPayload = Double(mixPushed) / mixSeconds
let referenceSeconds = median(rounds) { for kind in mix { sink &+= decideEachAlone(kind.messages) } }
let referencePerPayload = Double(mixPushed) / referenceSeconds

// MARK: - Baselines on the same pushed payloads: Codable + JSONEncoder, and the ceiling writer

let payloads = kinds.flatMap(\.tally.payloads)
let ceilingParts = payloads.map(segments(of:))
for (payload, parts) in zip(payloads, ceilingParts) where ceilingWrite(parts, capacity: payload.count + 32) != payload {
    fail("the ceiling writer does not write PushBridge's bytes for \(String(decoding: payload, as: UTF8.self))")
}
let ceilingSeconds = median(rounds) {
    for (payload, parts) in zip(payloads, ceilingParts) { sink &+= ceilingWrite(parts, capacity: payload.count + 32).count }
}
let ceilingPerSec = Double(payloads.count) / ceilingSeconds
let codableInputs = payloads.map(codable)
let encoder = JSONEncoder()
let codableSeconds = try median(rounds) {
    for payload in codableInputs { sink &+= try encoder.encode(payload).count }
}
let codablePerSec = Double(codableInputs.count) / codableSeconds

// The ratios: in each round the whole mix, the Codable baseline and the ceiling writer run one after
// another, so that the machine's speed (which drifts by 10–30 % within seconds here) is nearly the same
// for the three; each ratio is the median of the rounds' ratios.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}
var codableRatios: [Double] = []
var ceilingRatios: [Double] = []
for _ in 0..<rounds {
    let mixTime = seconds { for kind in mix { sink &+= decide(kind.messages).payloadBytes } }
    let codableTime = try seconds { for payload in codableInputs { sink &+= try encoder.encode(payload).count } }
    let ceilingTime = seconds { for (payload, parts) in zip(payloads, ceilingParts) { sink &+= ceilingWrite(parts, capacity: payload.count + 32).count } }
    codableRatios.append(codableTime / mixTime)
    ceilingRatios.append(ceilingTime / mixTime)
}
let ratioVsCodable = codableRatios.sorted()[rounds / 2]
let ratioVsCeiling = ceilingRatios.sorted()[rounds / 2]

// MARK: - One-to-one messages through the facade, state in SQLite: one transaction each, then 64 per transaction

func oneToOneThroughFacade(messages count: Int, batch: Int) async throws -> Double {
    let folder = try makeTemporaryFolder("pushbridge-one-to-one")
    let store = try SQLiteStateStore(path: folder.appendingPathComponent("state.db").path)
    let facade = PushFacade(store: store)
    let certificate = Certificate(name: "agoraTest", busiId: nil, bundleId: "io.agora.chatdemo", environment: .production)
    try await facade.configure(AppConfiguration(certificates: [certificate]))
    let users = 2_000
    try store.write { transaction in
        for i in 0..<users {
            var state = UserState(user: "user-\(i)", displayStyle: .messageSummary, backgroundGraceSeconds: 120)
            state.devices = [Device(token: String(format: "%064x", i), certificate: certificate)]
            state.displayName = "User \(i)"
            try transaction.save(state, replacing: nil)
        }
    }
    let now = Instant(iso8601: "2026-03-02T09:15:00Z")!
    let prepared = try (0..<count).map { i in
        try facade.prepare(
            JSONParser.parse(
                #"{"id":"o\#(i)-\#(batch)","conversationId":"user-\#((i * 7 + 1) % users)","from":"user-\#(i % users)","to":"user-\#((i * 7 + 1) % users)","chatType":"Chat","body":{"type":"text","text":"\#(TrafficMix.texts[i % TrafficMix.texts.count])"}}"#),
            dialect: "agora-silent", now: now)
    }
    var decisions = 0
    let start = DispatchTime.now().uptimeNanoseconds
    if batch == 1 {
        for message in prepared { decisions += try await facade.send(message).decisions.count }
    } else {
        var i = 0
        while i < prepared.count {
            let results = try await facade.send(Array(prepared[i..<min(i + batch, prepared.count)]))
            for result in results { decisions += try result.get().decisions.count }
            i += batch
        }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    if decisions != count { fail("one-to-one: \(decisions) decisions for \(count) messages") }
    return Double(count) / seconds
}
let oneToOneSingle = try await oneToOneThroughFacade(messages: 10_000, batch: 1)
// The median of three runs: one run's rate varies by ±10 % on a shared 2-core machine.
var oneToOneRuns: [Double] = []
for _ in 0..<3 { oneToOneRuns.append(try await oneToOneThroughFacade(messages: 40_000, batch: 64)) }
let oneToOneBatched = oneToOneRuns.sorted()[1]

// MARK: - Strict comparison (json-c) vs Foundation, on the same pairs.

var pairs: [([UInt8], [UInt8])] = payloads.prefix(2_000).map { ($0, $0) }
/// Pairs that differ only in type or by a duplicate key: a strict comparison must call them different.
let tricky: [(String, String)] = [
    (#"{"aps":{"badge":1}}"#, #"{"aps":{"badge":1.0}}"#),
    (#"{"aps":{"badge":1}}"#, #"{"aps":{"badge":true}}"#),
    (#"{"aps":{"mutable-content":1}}"#, #"{"aps":{"mutable-content":true}}"#),
    (#"{"a":2}"#, #"{"a":1,"a":2}"#),
    (#"{"aps":{"sound":"default"},"e":0}"#, #"{"aps":{"sound":"default"},"e":false}"#),
]
pairs += tricky.map { (Array($0.0.utf8), Array($0.1.utf8)) }
let compareIterations = max(1, 100_000 / pairs.count)
let strictSeconds = median(rounds) {
    for _ in 0..<compareIterations {
        for (a, b) in pairs { if (try? StrictComparison.equal(expected: a, got: b)) == true { sink &+= 1 } }
    }
}
let strictPerSec = Double(compareIterations * pairs.count) / strictSeconds
let foundationCompareIterations = max(1, 20_000 / pairs.count)
func foundationEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard let x = try? JSONSerialization.jsonObject(with: Data(a)) as? NSDictionary,
        let y = try? JSONSerialization.jsonObject(with: Data(b)) as? NSDictionary
    else { return false }
    return x.isEqual(y)
}
let foundationCompareSeconds = median(rounds) {
    for _ in 0..<foundationCompareIterations {
        for (a, b) in pairs where foundationEqual(a, b) { sink &+= 1 }
    }
}
let foundationComparePerSec = Double(foundationCompareIterations * pairs.count) / foundationCompareSeconds
let foundationFalseEqual = tricky.filter { a, b in
    let strict = (try? StrictComparison.equal(expected: Array(a.utf8), got: Array(b.utf8))) ?? false
    return foundationEqual(Array(a.utf8), Array(b.utf8)) && !strict
}.count

// MARK: - 10,000 generated fixtures, in-process, through the same runner as `pushbridge conform`.

let allFixtures = (try? FixtureDiscovery.files(in: [fixturesRoot])) ?? []
if allFixtures.isEmpty { fail("no fixtures under \(fixturesRoot) (run from the repository root or pass --fixtures DIR)") }
let generated = try makeTemporaryFolder("pushbridge-bench")
for i in 0..<10_000 {
    let source = allFixtures[i % allFixtures.count]
    guard case .object(var object) = try JSONParser.parse(FixtureDiscovery.read(source)) else { continue }
    object["name"] = .string((object["name"]?.stringValue ?? "") + " #\(i)")  // each file its own fixture
    var writer = JSONWriter()
    writer.write(.object(object))
    try Data(writer.bytes).write(to: generated.appendingPathComponent(String(format: "%05d.json", i)))
}
var conformReport = ConformanceReport(results: [])
let conformSeconds = try await median(max(1, rounds / 2)) { conformReport = try await ConformanceRunner().run(paths: [generated.path]) }
if conformReport.failedCount != 0 || conformReport.passedCount != 10_000 { fail("generated fixtures: \(conformReport.summaryLine)") }

// MARK: - Report, targets, and the regression check of the ratios against the recorded ones

func shown(_ value: Double) -> String { value >= 100 ? String(Int(value.rounded())) : String(format: "%.3f", value) }
func grouped(_ value: Double) -> String {
    let digits = String(Int(value.rounded()))
    var out = ""
    for (i, c) in digits.reversed().enumerated() {
        if i > 0 && i % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return String(out.reversed())
}

print("Traffic mix (median of \(rounds) runs, one thread): \(mixDecisions) decisions, \(mixPushed) pushed, \(mixSuppressed) suppressed")
print("kind                 decisions  pushed  suppressed  pushed payloads/s  decisions/s  bytes/payload")
for k in kinds {
    print(k.name.padding(toLength: 20, withPad: " ", startingAt: 0) + " "
        + String(k.tally.decisions).leftPadded(9) + " " + String(k.tally.pushed).leftPadded(7) + " " + String(k.tally.suppressed).leftPadded(11) + " "
        + grouped(k.perPushedPayload).leftPadded(18) + " " + grouped(k.decisionsPerSec).leftPadded(12) + " "
        + String(k.tally.pushed == 0 ? 0 : k.tally.payloadBytes / k.tally.pushed).leftPadded(14))
}
for k in kinds { print("  \(k.name): \(k.summary)") }
print("")

let figures: [(String, Double)] = [
    ("decide_render_per_pushed_payload", decideRenderPerPayload),
    ("each_alone_per_pushed_payload", referencePerPayload),
    ("ratio_vs_each_alone", decideRenderPerPayload / referencePerPayload),
    ("codable_per_payload", codablePerSec),
    ("ceiling_per_payload", ceilingPerSec),
    ("ratio_vs_codable", ratioVsCodable),
    ("ratio_vs_ceiling", ratioVsCeiling),
    ("fanout_100k_first_ms", fanout.firstMs),
    ("fanout_100k_warm_ms", fanout.warmMs),
    ("fanout_peak_rss_mb", fanoutPeakRSS),
    // The fan-out's times against the baselines' time for as many payloads (100,000), in this same run.
    ("ratio_fanout_first_time_vs_codable", fanout.firstMs / (100_000 / codablePerSec * 1000)),
    ("ratio_fanout_warm_time_vs_ceiling", fanout.warmMs / (100_000 / ceilingPerSec * 1000)),
    ("one_to_one_facade_per_sec", oneToOneSingle),
    ("one_to_one_facade_batched_per_sec", oneToOneBatched),
    ("ratio_one_to_one_batched_vs_codable", oneToOneBatched / codablePerSec),
    ("strict_compare_per_sec", strictPerSec),
    ("foundation_compare_per_sec", foundationComparePerSec),
    ("ratio_strict_vs_foundation", strictPerSec / foundationComparePerSec),
    ("foundation_false_equal", Double(foundationFalseEqual)),
    ("conform_10k_fixtures_s", conformSeconds),
]

/// The figures checked against the recorded ones: ratios to baselines measured in this same run, so
/// that a slower or busier machine does not read as a regression (absolute figures are printed only).
let checked = ["ratio_vs_codable", "ratio_vs_ceiling", "ratio_strict_vs_foundation"]
/// The targets: same-run ratios, so that a machine computing half as fast meets them alike (memory is
/// the one absolute figure). The fan-out's were 200 ms first and 30 ms warm, and 50,000 one-to-one sends
/// a second, on the machine whose baselines `recorded.json` holds (Codable 169,394 payloads/s, the ceiling
/// 2,401,043/s: 100,000 payloads in 590 and 41.6 ms).
let targets: [String: Double] = [
    "ratio_vs_codable": 8, "ratio_vs_ceiling": 0.25, "ratio_fanout_warm_time_vs_ceiling": 0.72, "ratio_fanout_first_time_vs_codable": 0.34,
    "fanout_peak_rss_mb": 300, "ratio_one_to_one_batched_vs_codable": 0.295, "ratio_strict_vs_foundation": 5,
]
/// The recorded figures: `--recorded FILE`; else the source file when run from the checkout (so
/// `--record` updates it); else the copy built into the bench as a resource.
let sourceRecorded = "Sources/PushBridgeBench/recorded.json"
let recordedPath = arguments.firstIndex(of: "--recorded").map { arguments[$0 + 1] }
    ?? (FileManager.default.fileExists(atPath: sourceRecorded) ? sourceRecorded : Bundle.module.path(forResource: "recorded", ofType: "json") ?? sourceRecorded)
let tolerance = 0.30

var recorded: [String: Double] = [:]
if let bytes = FileManager.default.contents(atPath: recordedPath), case .object(let object)? = try? JSONParser.parse([UInt8](bytes)) {
    for (key, value) in object {
        switch value {
        case .int(let n): recorded[key] = Double(n)
        case .double(let d): recorded[key] = d
        default: break
        }
    }
}

var regressions: [String] = []
print("figure                              value        recorded     target")
for (name, value) in figures {
    var line = name.padding(toLength: 35, withPad: " ", startingAt: 0) + " " + shown(value).padding(toLength: 12, withPad: " ", startingAt: 0)
    line += " " + (recorded[name].map(shown) ?? "-").padding(toLength: 12, withPad: " ", startingAt: 0)
    if let target = targets[name] {
        let lower = lowerIsBetterFigure(name)
        let met = lower ? value <= target : value >= target
        line += " " + (lower ? "≤ " : "≥ ") + shown(target) + (met ? " met" : " NOT MET")
    }
    if checked.contains(name), let before = recorded[name], value < before * (1 - tolerance) {
        regressions.append(name)
        line += "   REGRESSED > 30 %"
    }
    if name == "foundation_false_equal", let before = recorded[name], value != before {
        regressions.append(name)
        line += "   CHANGED"
    }
    print(line)
}
print("fan-out: 100,000 members, \(fanout.pushed) pushed, the rest suppressed (online, no device, do-not-disturb, not mentioned); "
    + "members' rows loaded by a store opened anew in \(Int(fanout.loadMs)) ms (a warm send reads none: they are kept), "
    + "badge counters logged in \(Int(fanout.badgeWriteMs)) ms (the log folded into the counters table in \(Int(fanout.foldMs)) ms, once past its limit), "
    + "the repeat record \(fanout.recordBytes / 1000) KB, a repeated id answered in \(Int(fanout.repeatMs)) ms, "
    + "every pushed payload written out from its template in \(Int(fanout.writeOutMs)) ms, "
    + "one send's decisions freed in \(Int(fanout.freeMs)) ms (each warm send includes freeing the send's before it)")
print("baselines: \(payloads.count) pushed payloads of the mix; the ceiling writes the same bytes from the same parts (checked equal); "
    + "each ratio is the median of \(rounds) rounds that run the mix and both baselines back to back "
    + "(codable ratios \(codableRatios.map { String(format: "%.2f", $0) }.joined(separator: " ")); sink \(sink % 10)")
var json = JSONObject()
for (name, value) in figures {
    json[name] = name == "foundation_false_equal" ? .int(Int64(value)) : .double((value * 1000).rounded() / 1000)
}
if arguments.contains("--record") {
    try Data((JSONWriter.prettyText(.object(json)) + "\n").utf8).write(to: URL(fileURLWithPath: recordedPath))
    print("recorded in \(recordedPath)")
} else if recorded.isEmpty {
    FileHandle.standardError.write(Data("pushbridge-bench: no recorded figures at \(recordedPath); run with --record\n".utf8))
} else if !regressions.isEmpty {
    FileHandle.standardError.write(Data("pushbridge-bench: ratios more than 30 % below the recorded ones: \(regressions.joined(separator: ", "))\n".utf8))
}
var writer = JSONWriter()
writer.write(.object(json))
print(String(decoding: writer.bytes, as: UTF8.self))
if !regressions.isEmpty && !arguments.contains("--record") { exit(1) }
exit(0)

extension String {
    func leftPadded(_ width: Int) -> String { count >= width ? self : String(repeating: " ", count: width - count) + self }
}
