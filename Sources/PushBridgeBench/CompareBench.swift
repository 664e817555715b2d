// `make bench-compare REF=…`: this bench and a reference version's bench, alternated in one run, each
// figure side by side with its change; a same-run ratio that fell by 10 % or more is flagged.
import Foundation
import PushBridgeJSON

/// One bench binary to run: where it is and the folder it runs in (its own checkout, for its fixtures
/// and recorded figures).
struct BenchUnderTest {
    var name: String
    var executable: String
    var folder: String
}

/// What one section of the bench prints last, as figures by name.
typealias Figures = [String: Double]

/// The sections `--compare` runs, each a command line of the bench.
enum CompareSection: String, CaseIterable {
    case core, serve, deliver
    /// `bench-postgres` (run the comparison through `Tests/Scripts/with-postgres.sh`), with a
    /// 20,000-member fan-out.
    case postgres

    /// The sections a comparison runs when none are named.
    static let defaults: [CompareSection] = [.core, .serve, .deliver]

    /// The bench's arguments for this section.
    func arguments(seconds: Int) -> [String] {
        switch self {
        case .core: []
        case .serve: ["--serve", "--seconds", String(seconds)]
        case .deliver: ["--deliver", "--latency", "0,100"]
        case .postgres: ["--postgres", "--seconds", String(seconds), "--members", "20000"]
        }
    }
}

/// Runs `bench` for `section` and reads the JSON line it prints last, flattened into figures
/// (a list of runs, as `--deliver` prints, is keyed by each run's `latency_ms`).
/// - Parameters:
///   - bench: the binary and its folder.
///   - section: which part of the bench.
///   - seconds: each wrk run's length (serve).
func runSection(_ bench: BenchUnderTest, _ section: CompareSection, seconds: Int) -> Figures {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: bench.executable)
    process.arguments = section.arguments(seconds: seconds)
    process.currentDirectoryURL = URL(fileURLWithPath: bench.folder)
    if section == .postgres, let server = ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"] {
        // A database of the run's own: each version migrates what it opens, and a newer one's schema is
        // refused by an older PushBridge (as it should be).
        var environment = ProcessInfo.processInfo.environment
        environment["PUSHBRIDGE_TEST_POSTGRES_URL"] = freshDatabase(on: server)
        process.environment = environment
    }
    let pipe = Pipe()
    process.standardOutput = pipe
    do { try process.run() } catch { fail("cannot run \(bench.executable): \(error)") }
    let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    // The core bench exits 1 when a ratio fell below its recorded figure: its figures still count here.
    guard process.terminationStatus == 0 || (section == .core && process.terminationStatus == 1) else {
        fail("\(bench.name)'s bench (\(section.rawValue)) exited \(process.terminationStatus):\n\(output.suffix(2_000))")
    }
    guard let last = output.split(separator: "\n").last(where: { $0.hasPrefix("{") || $0.hasPrefix("[") }),
        let value = try? JSONParser.parse(Array(last.utf8))
    else { fail("\(bench.name)'s bench (\(section.rawValue)) printed no JSON line:\n\(output.suffix(2_000))") }
    var figures = Figures()
    func add(_ object: JSONObject, prefix: String) {
        for (key, value) in object {
            switch value {
            case .int(let n): figures[prefix + key] = Double(n)
            case .double(let d): figures[prefix + key] = d
            default: break
            }
        }
    }
    switch value {
    case .object(let object): add(object, prefix: "")
    case .array(let runs):
        for case .object(let run) in runs {
            let latency = run["latency_ms"].flatMap { if case .int(let n) = $0 { Int(n) } else { nil } } ?? 0
            add(run, prefix: "\(latency)ms_")
        }
    default: break
    }
    return figures
}

/// Whether a figure is a ratio to a baseline measured in the same run (the figures a comparison judges).
func isSameRunRatio(_ name: String) -> Bool { name.contains("ratio") || name.contains("_time_vs_") }

/// Whether a lower value of the figure is better (times, memory, latencies, failures, a time against a
/// baseline's); the rest are rates, ratios or counts, where higher is better.
func lowerIsBetterFigure(_ name: String) -> Bool {
    ["_ms", "_s", "_mb", "non_2xx"].contains { name.hasSuffix($0) } || name.contains("_time_vs_")
}

/// Runs both benches, alternated, `rounds` times per section, and prints the comparison.
/// - Parameters:
///   - current: this checkout's bench.
///   - reference: the reference version's bench.
///   - sections: the parts of the bench to compare.
///   - rounds: runs of each bench per section; the order alternates each round (current first, then
///     the reference first), so that a drift of the machine's speed falls on both alike.
///   - seconds: each wrk run's length.
/// - Returns: the same-run ratios that fell by 10 % or more.
func compareBenches(current: BenchUnderTest, reference: BenchUnderTest, sections: [CompareSection], rounds: Int, seconds: Int) -> [String] {
    var flagged: [String] = []
    print("pushbridge-bench --compare: \(current.name) against \(reference.name), \(rounds) rounds alternated, sections \(sections.map(\.rawValue).joined(separator: ", "))")
    for section in sections {
        var mine: [Figures] = []
        var theirs: [Figures] = []
        for round in 0..<rounds {
            let order = round % 2 == 0 ? [current, reference] : [reference, current]
            for bench in order {
                FileHandle.standardError.write(Data("[\(section.rawValue) round \(round + 1)/\(rounds)] \(bench.name)\n".utf8))
                let figures = runSection(bench, section, seconds: seconds)
                if bench.name == current.name { mine.append(figures) } else { theirs.append(figures) }
            }
        }
        print("\n== \(section.rawValue) (mean of \(rounds); each run's values in brackets)")
        let width = max(14, reference.name.count + 2, current.name.count + 2)
        print("figure".padding(toLength: 38, withPad: " ", startingAt: 0) + reference.name.leftPadded(width) + current.name.leftPadded(width) + "  change")
        let names = Set(mine.flatMap(\.keys)).union(theirs.flatMap(\.keys)).sorted()
        for name in names {
            let a = theirs.compactMap { $0[name] }
            let b = mine.compactMap { $0[name] }
            func mean(_ values: [Double]) -> Double? { values.isEmpty ? nil : values.reduce(0, +) / Double(values.count) }
            let before = mean(a)
            let after = mean(b)
            var line = name.padding(toLength: 38, withPad: " ", startingAt: 0) + (before.map(shown) ?? "-").leftPadded(width) + (after.map(shown) ?? "-").leftPadded(width)
            if let before, let after, before != 0 {
                let change = after / before - 1
                line += String(format: "  %+6.1f %%", change * 100)
                let worse = lowerIsBetterFigure(name) ? change >= 0.10 : change <= -0.10
                if isSameRunRatio(name) && worse {
                    flagged.append("\(section.rawValue): \(name)")
                    line += "   FELL ≥ 10 %"
                }
            }
            line += "   [" + a.map(shown).joined(separator: " ") + " | " + b.map(shown).joined(separator: " ") + "]"
            print(line)
        }
    }
    print("")
    print(flagged.isEmpty ? "no same-run ratio fell by 10 % or more" : "same-run ratios that fell by 10 % or more: \(flagged.joined(separator: "; "))")
    return flagged
}

/// A new database on the server `url` names (`CREATE DATABASE`), and the URL that names it.
/// - Parameter url: a PostgreSQL URL whose path is any database the user can connect to.
func freshDatabase(on url: String) -> String {
    let name = "pb_bench_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(12).lowercased()
    psql(url, "CREATE DATABASE \(name)")
    guard var components = URLComponents(string: url) else { fail("not a URL: PUSHBRIDGE_TEST_POSTGRES_URL") }
    components.path = "/" + name
    return components.string ?? url
}
