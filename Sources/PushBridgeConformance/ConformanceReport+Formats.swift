import Foundation
import PushBridgeJSON

extension FixtureFailure {
    /// A short word for the kind of failure.
    public var kind: String {
        switch self {
        case .mismatch: return "mismatch"
        case .noExpectation: return "no-expectation"
        case .badFixture: return "bad-fixture"
        case .implementation: return "implementation"
        case .variants: return "variants"
        }
    }

    /// The failure as JSON: `kind`, `message`, and the structured details.
    public var json: JSONValue {
        var o = JSONObject([("kind", .string(kind)), ("message", .string(description))])
        switch self {
        case .mismatch(let differences):
            o["differences"] = .array(differences.map(\.json))
        case .badFixture(let error):
            o["error"] = .object(
                JSONObject([
                    ("file", error.file.map(JSONValue.string) ?? .null), ("pointer", .string(error.pointer.description)),
                    ("code", .string(error.code.description)), ("expected", .string(error.expected)),
                    ("found", error.found.map(JSONValue.string) ?? .null),
                ]))
        case .variants(let failures):
            o["variants"] = .array(
                failures.map { v in
                    var entry = JSONObject([("dialect", .string(v.dialect))])
                    if let profile = v.profile { entry["profile"] = .string(profile) }
                    if let failure = v.failure { entry["failure"] = failure.json }
                    if !v.canonicalDifferences.isEmpty { entry["canonicalDifferences"] = .array(v.canonicalDifferences.map(JSONValue.string)) }
                    return .object(entry)
                })
        case .noExpectation, .implementation: break
        }
        return .object(o)
    }
}

extension JSONDifference {
    /// `{"pointer", "expected": {"text", "type"} | null, "got": … }`.
    public var json: JSONValue {
        func side(_ s: Side?) -> JSONValue {
            s.map { .object(JSONObject([("text", .string($0.text)), ("type", .string($0.type))])) } ?? .null
        }
        return .object(JSONObject([("pointer", .string(pointer.description)), ("expected", side(expected)), ("got", side(got))]))
    }
}

extension ConformanceReport {
    /// The machine-readable report (`--format json`).
    public var json: JSONValue {
        var members: [(String, JSONValue)] = [("passed", .int(Int64(passedCount))), ("failed", .int(Int64(failedCount)))]
        if skippedCount > 0 {
            members.append(("skipped", .int(Int64(skippedCount))))
            let groups: [JSONValue] = skipGroups.map { .object(JSONObject([("reason", .string($0.reason)), ("fixtures", .int(Int64($0.fixtures)))])) }
            members.append(("skipped_by_reason", .array(groups)))
        }
        if !notices.isEmpty { members.append(("notices", .array(notices.map(JSONValue.string)))) }
        let fixtures: [JSONValue] = results.map { r in
            var o = JSONObject([("path", .string(r.path)), ("name", r.name.map(JSONValue.string) ?? .null)])
            o["status"] = .string(r.skipped != nil ? "skipped" : r.passed ? "passed" : "failed")
            if let reason = r.skipped { o["skipped"] = .string(reason) }
            o["kind"] = .string(r.isEquivalence ? "equivalence" : "scenario")
            o["dialects"] = .array(r.dialects.map(JSONValue.string))
            o["profiles"] = .array(r.profiles.map(JSONValue.string))
            if let failure = r.failure { o["failure"] = failure.json }
            return .object(o)
        }
        members.append(("fixtures", .array(fixtures)))
        return .object(JSONObject(members))
    }

    /// One JUnit test case: one fixture, as one line of the human report.
    struct TestCase {
        var suite: String
        var name: String
        var path: String
        var seconds: Double
        /// `failure` or `error` with its message and body, `skipped` with its reason; `nil` when it passed.
        var outcome: (element: String, type: String, message: String, body: String)?
    }

    /// The JUnit test cases: one per fixture, so the counts equal the human report's (an
    /// equivalence fixture is one case whatever its variants and profiles; its body names each
    /// variant and profile that failed). A fixture that is bad input is an `error`, any other
    /// failure a `failure`: failures + errors = the report's failed count.
    var testCases: [TestCase] {
        results.map { r in
            let slash = r.path.lastIndex(of: "/")
            let suite = slash.map { String(r.path[..<$0]) } ?? "."
            var name = slash.map { String(r.path[r.path.index(after: $0)...]) } ?? r.path
            if !r.profiles.isEmpty { name += " [" + r.profiles.joined(separator: ", ") + "]" }
            if let reason = r.skipped { return TestCase(suite: suite, name: name, path: r.path, seconds: r.seconds, outcome: ("skipped", "skipped", reason, "")) }
            let outcome = r.failure.map { f -> (String, String, String, String) in
                let message: String
                if case .variants(let failures) = f, let first = failures.first {
                    message = first.label + (failures.count > 1 ? " (and \(failures.count - 1) more)" : "")
                } else {
                    message = f.description.split(separator: "\n").first.map(String.init) ?? f.kind
                }
                if case .badFixture = f { return ("error", f.kind, message, f.description) }
                return ("failure", f.kind, message, f.description)
            }
            return TestCase(suite: suite, name: name, path: r.path, seconds: r.seconds, outcome: outcome)
        }
    }

    /// The report as JUnit XML (`--junit FILE`): one `testsuite` per folder, one `testcase` per
    /// fixture with its time in seconds, failure messages carrying the strict diff; a suite's
    /// `properties` carry the run's notices (`note`) and its skips counted by reason (`skipped: …`).
    public var junitXML: String {
        let cases = testCases
        var suites: [(String, [TestCase])] = []
        for c in cases {
            if let i = suites.firstIndex(where: { $0.0 == c.suite }) { suites[i].1.append(c) } else { suites.append((c.suite, [c])) }
        }
        func count(_ list: [TestCase], _ element: String) -> Int { list.filter { $0.outcome?.element == element }.count }
        func time(_ seconds: Double) -> String { String(format: "%.3f", seconds) }
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"pushbridge conform\" tests=\"\(cases.count)\" failures=\"\(count(cases, "failure"))\" errors=\"\(count(cases, "error"))\"" + (count(cases, "skipped") > 0 ? " skipped=\"\(count(cases, "skipped"))\"" : "")
            + " time=\"\(time(cases.reduce(0) { $0 + $1.seconds }))\">\n"
        for (name, list) in suites {
            xml += "  <testsuite name=\"\(Self.escape(name))\" tests=\"\(list.count)\" failures=\"\(count(list, "failure"))\" errors=\"\(count(list, "error"))\"" + (count(list, "skipped") > 0 ? " skipped=\"\(count(list, "skipped"))\"" : "")
                + " time=\"\(time(list.reduce(0) { $0 + $1.seconds }))\">\n"
            // The run's notices, and this suite's skips counted by reason.
            let skips = Self.counted(list.compactMap { $0.outcome?.element == "skipped" ? $0.outcome?.message : nil })
            let properties = notices.map { ("note", $0) } + skips.map { ("skipped: " + $0.reason, String($0.fixtures)) }
            if !properties.isEmpty {
                xml += "    <properties>\n"
                for (name, value) in properties { xml += "      <property name=\"\(Self.escape(name))\" value=\"\(Self.escape(value))\"/>\n" }
                xml += "    </properties>\n"
            }
            for c in list {
                let head = "    <testcase classname=\"\(Self.escape(c.suite))\" name=\"\(Self.escape(c.name))\" file=\"\(Self.escape(c.path))\" time=\"\(time(c.seconds))\""
                guard let o = c.outcome else {
                    xml += head + "/>\n"
                    continue
                }
                xml += head + ">\n"
                if o.element == "skipped" {
                    xml += "      <skipped message=\"\(Self.escape(o.message))\"/>\n    </testcase>\n"
                    continue
                }
                xml += "      <\(o.element) type=\"\(Self.escape(o.type))\" message=\"\(Self.escape(o.message))\">\(Self.escape(o.body))</\(o.element)>\n"
                xml += "    </testcase>\n"
            }
            xml += "  </testsuite>\n"
        }
        return xml + "</testsuites>\n"
    }

    /// Escapes text for XML content and attributes; drops characters XML 1.0 cannot hold.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&apos;"
            case "\n": out += "&#10;"
            case "\t", "\r": out += "&#\(scalar.value);"
            default:
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { out += "\u{FFFD}" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }
}
