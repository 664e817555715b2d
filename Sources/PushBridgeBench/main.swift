// pushbridge-bench: release-build throughput figures, each measured against a baseline in the same run.
// `make bench` builds it in release and runs it from the repository root. It prints a table and, last,
// one JSON object. Per core: everything runs on one thread, and each figure is the median of several runs.
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

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

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data(("pushbridge-bench: " + message + "\n").utf8))
    exit(2)
}

// MARK: - The mix: every dialect fixture, prepared (state in memory), rendered with each profile.

let engine = ScenarioEngine()
let scenarioFiles = (try? FixtureDiscovery.files(in: DialectRegistry.standard.ids.map { fixturesRoot + "/" + $0 })) ?? []
if scenarioFiles.isEmpty { fail("no fixtures under \(fixturesRoot) (run from the repository root or pass --fixtures DIR)") }
let prepared: [ScenarioEngine.Prepared] = scenarioFiles.compactMap { try? engine.prepare(Fixture(path: $0).scenario) }
let mix: [(ScenarioEngine.Prepared, Profile, PushDecider)] = prepared.flatMap { p in Profile.builtIn.map { (p, $0, PushDecider(app: p.world.app)) } }

// MARK: - decide + render

var sink = 0
let decideIterations = max(1, 2_000_000 / mix.count)
let decideSeconds = median(rounds) {
    for _ in 0..<decideIterations {
        for (p, profile, decider) in mix {
            switch decider.decide(p.message, sender: p.senderState, receiver: p.receiverState, profile: profile, now: p.now) {
            case .push(let request): sink &+= request.payload.count
            case .suppressed(let reason): sink &+= reason.rawValue.utf8.count
            }
        }
    }
}
let decideRenderPerSec = Double(decideIterations * mix.count) / decideSeconds

// MARK: - Baselines: the same payloads built as Codable structs (JSONEncoder) and as dictionaries (JSONSerialization).

struct CodableAlert: Codable {
    var title: String?
    var subtitle: String?
    var body: String?
    var titleLocKey: String?
    var titleLocArgs: [String]?
    var locKey: String?
    var locArgs: [String]?
    enum CodingKeys: String, CodingKey {
        case title, subtitle, body
        case titleLocKey = "title-loc-key", titleLocArgs = "title-loc-args", locKey = "loc-key", locArgs = "loc-args"
    }
}
struct CodableAPS: Codable {
    var alert: CodableAlert
    var badge: Int?
    var sound: String?
    var category: String?
    var mutableContent: Int?
    enum CodingKeys: String, CodingKey { case alert, badge, sound, category, mutableContent = "mutable-content" }
}
struct CodablePayload: Codable {
    var aps: CodableAPS
    var f: String?
    var t: String?
    var m: String?
    var g: String?
    var ext: String?
}

/// The parts of each pushed payload, taken from PushBridge's own output so all three build the same thing.
let pushed: [[String: Any]] = mix.compactMap { p, profile, decider in
    guard case .push(let request) = decider.decide(p.message, sender: p.senderState, receiver: p.receiverState, profile: profile, now: p.now)
    else { return nil }
    return try? JSONSerialization.jsonObject(with: Data(request.payload)) as? [String: Any]
}
func codable(_ d: [String: Any]) -> CodablePayload {
    let aps = d["aps"] as! [String: Any]
    var alert = CodableAlert()
    if let a = aps["alert"] as? [String: Any] {
        alert = CodableAlert(title: a["title"] as? String, subtitle: a["subtitle"] as? String, body: a["body"] as? String,
            titleLocKey: a["title-loc-key"] as? String, titleLocArgs: a["title-loc-args"] as? [String], locKey: a["loc-key"] as? String,
            locArgs: a["loc-args"] as? [String])
    } else {
        alert.body = aps["alert"] as? String
    }
    return CodablePayload(
        aps: CodableAPS(alert: alert, badge: aps["badge"] as? Int, sound: aps["sound"] as? String, category: aps["category"] as? String,
            mutableContent: aps["mutable-content"] as? Int),
        f: d["f"] as? String, t: d["t"] as? String, m: d["m"] as? String, g: d["g"] as? String, ext: d["ext"] as? String)
}
let codableInputs = pushed.map(codable)
let encoder = JSONEncoder()
let codableIterations = max(1, 200_000 / max(1, codableInputs.count))
let codableSeconds = try median(rounds) {
    for _ in 0..<codableIterations {
        for payload in codableInputs {
            var copy = payload
            copy.aps.badge = (copy.aps.badge ?? 0) + 1
            sink &+= try encoder.encode(copy).count
        }
    }
}
let codablePerSec = Double(codableIterations * codableInputs.count) / codableSeconds

let foundationIterations = max(1, 40_000 / max(1, pushed.count))
let foundationSeconds = try median(rounds) {
    for _ in 0..<foundationIterations {
        for payload in pushed {
            var aps = payload["aps"] as! [String: Any]
            aps["badge"] = ((aps["badge"] as? Int) ?? 0) + 1
            var copy = payload
            copy["aps"] = aps
            sink &+= try JSONSerialization.data(withJSONObject: copy, options: [.sortedKeys]).count
        }
    }
}
let foundationPerSec = Double(foundationIterations * pushed.count) / foundationSeconds

// MARK: - Strict comparison (json-c) vs Foundation, on the same pairs.

var pairs: [([UInt8], [UInt8])] = []
for (p, profile, decider) in mix {
    if case .push(let request) = decider.decide(p.message, sender: p.senderState, receiver: p.receiverState, profile: profile, now: p.now) {
        pairs.append((request.payload, request.payload))
    }
}
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
let generated = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-bench-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: generated, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: generated) }
for i in 0..<10_000 {
    let source = allFixtures[i % allFixtures.count]
    guard case .object(var object) = try JSONParser.parse(FixtureDiscovery.read(source)) else { continue }
    object["name"] = .string((object["name"]?.stringValue ?? "") + " #\(i)")  // each file its own fixture
    var writer = JSONWriter()
    writer.write(.object(object))
    FileManager.default.createFile(atPath: generated.appendingPathComponent(String(format: "%05d.json", i)).path, contents: Data(writer.bytes))
}
var conformReport = ConformanceReport(results: [])
let conformSeconds = try median(max(1, rounds / 2)) { conformReport = try ConformanceRunner().run(paths: [generated.path]) }
if conformReport.failedCount != 0 || conformReport.passedCount != 10_000 { fail("generated fixtures: \(conformReport.summaryLine)") }

// MARK: - Report

let figures: [(String, Double)] = [
    ("decide_render_per_sec", decideRenderPerSec),
    ("codable_baseline_per_sec", codablePerSec),
    ("ratio_vs_codable", decideRenderPerSec / codablePerSec),
    ("foundation_baseline_per_sec", foundationPerSec),
    ("ratio_vs_foundation", decideRenderPerSec / foundationPerSec),
    ("strict_compare_per_sec", strictPerSec),
    ("foundation_compare_per_sec", foundationComparePerSec),
    ("foundation_false_equal", Double(foundationFalseEqual)),
    ("conform_10k_fixtures_s", conformSeconds),
]
print("figure                         value")
for (name, value) in figures {
    let shown = value >= 100 ? String(Int(value.rounded())) : String(format: "%.3f", value)
    print(name.padding(toLength: 30, withPad: " ", startingAt: 0) + " " + shown)
}
print("mix: \(prepared.count) scenarios × \(Profile.builtIn.count) profiles; \(pairs.count) comparison pairs (\(tricky.count) differ only in type or by a duplicate key); median of \(rounds) runs; sink \(sink % 10)")
var json = JSONObject()
for (name, value) in figures {
    json[name] = name == "foundation_false_equal" ? .int(Int64(value)) : .double((value * 1000).rounded() / 1000)
}
json["fanout_100k_ms"] = .null  // the SQLite facade (issue 7) is not built yet
var writer = JSONWriter()
writer.write(.object(json))
print(String(decoding: writer.bytes, as: UTF8.self))
