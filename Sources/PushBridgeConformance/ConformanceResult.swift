import PushBridgeJSON

/// Why one fixture did not pass.
public enum FixtureFailure: Hashable, Sendable, CustomStringConvertible {
    /// The output differs from the expectation.
    case mismatch([JSONDifference])
    /// The fixture has no `expect`.
    case noExpectation
    /// The fixture itself is bad input.
    case badFixture(InputError)
    /// The implementation under test failed to give a decision (crash, timeout, invalid JSON).
    case implementation(String)
    /// Equivalence fixture: the variants and profiles that failed, and any canonical difference.
    case variants([VariantFailure])

    /// The reasons of this failure for the grouped summary: one per difference, by pointer and
    /// JSON types (not values), so that the same mistake in many fixtures groups into one line.
    public var reasons: Set<String> {
        switch self {
        case .mismatch(let differences):
            return Set(differences.map { d in
                let expected = d.expected?.type ?? "nothing"
                let got = d.got?.type ?? "nothing"
                // Types, not values, group the same mistake; a boolean has only two values, so they are shown.
                if expected == got, expected == "boolean", let e = d.expected?.text, let g = d.got?.text { return "\(d.pointer) expected \(e), got \(g)" }
                return "\(d.pointer) " + (expected == got ? "a different \(expected)" : "expected \(expected), got \(got)")
            })
        case .noExpectation: return ["no \"expect\""]
        case .badFixture(let error): return ["bad fixture: \(error.code)"]
        case .implementation(let reason): return [reason]
        case .variants(let failures):
            return failures.reduce(into: Set<String>()) { out, v in
                if let failure = v.failure { out.formUnion(failure.reasons) } else { out.insert("canonical state differs between variants") }
            }
        }
    }

    public var description: String {
        switch self {
        case .mismatch(let differences): return differences.map(\.description).joined(separator: "\n")
        case .noExpectation: return "the fixture has no \"expect\" (record one with --record)"
        case .badFixture(let error): return error.description
        case .implementation(let reason): return reason
        case .variants(let failures): return failures.map(\.description).joined(separator: "\n")
        }
    }
}

/// One failing part of an equivalence fixture: a variant rendered with a profile, or the
/// canonical state of two variants.
public struct VariantFailure: Hashable, Sendable, CustomStringConvertible {
    /// `agora-silent rendered as tencent-tim`, or `canonical state: easemob-legacy vs tencent-tim`.
    public let label: String
    /// The variant's dialect.
    public let dialect: String
    /// The profile, for a rendering failure.
    public let profile: String?
    public let failure: FixtureFailure?
    /// Canonical differences, for a state failure (`receiver user.app.window: 22:00–8:00 ≠ (none)`).
    public let canonicalDifferences: [String]

    public init(dialect: String, profile: String, failure: FixtureFailure) {
        self.label = "\(dialect) rendered as \(profile)"
        self.dialect = dialect
        self.profile = profile
        self.failure = failure
        self.canonicalDifferences = []
    }

    public init(dialect: String, comparedWith other: String, differences: [String]) {
        self.label = "canonical state: \(other) vs \(dialect)"
        self.dialect = dialect
        self.profile = nil
        self.failure = nil
        self.canonicalDifferences = differences
    }

    public var description: String {
        let details = failure.map { $0.description.split(separator: "\n").map(String.init) } ?? canonicalDifferences
        return ([label + ":"] + details.map { "  " + $0 }).joined(separator: "\n")
    }
}

/// The outcome of one fixture.
public struct FixtureResult: Hashable, Sendable {
    public let path: String
    /// The scenario's name, when it could be read.
    public let name: String?
    public let failure: FixtureFailure?
    /// The dialects run: the scenario's, or an equivalence fixture's variants.
    public let dialects: [String]
    /// The profiles checked: the scenario's, or each expected profile of an equivalence fixture.
    public let profiles: [String]
    /// Whether this is an equivalence fixture (which also compares canonical state).
    public let isEquivalence: Bool
    /// How long the fixture took to run, in seconds (every variant and profile of it).
    public var seconds: Double = 0
    /// Why the fixture was not run (black-box mode: a step the server under test has no call
    /// for); neither passed nor failed.
    public var skipped: String?

    public init(path: String, name: String?, failure: FixtureFailure?, dialects: [String] = [], profiles: [String] = [], isEquivalence: Bool = false) {
        self.path = path
        self.name = name
        self.failure = failure
        self.dialects = dialects
        self.profiles = profiles
        self.isEquivalence = isEquivalence
    }

    public var passed: Bool { failure == nil && skipped == nil }

    /// A fixture not run, with the reason.
    public static func skipped(path: String, name: String?, reason: String, dialects: [String] = []) -> FixtureResult {
        var result = FixtureResult(path: path, name: name, failure: nil, dialects: dialects)
        result.skipped = reason
        return result
    }
}

/// The outcome of a conformance run.
public struct ConformanceReport: Hashable, Sendable {
    public var results: [FixtureResult]
    /// What the run says once, up front, about all of it (say, that the capture received no
    /// connection while fixtures expected pushes).
    public var notices: [String]

    /// - Parameters:
    ///   - results: one per fixture, in run order.
    ///   - notices: said once, before the fixtures.
    public init(results: [FixtureResult], notices: [String] = []) {
        self.results = results
        self.notices = notices
    }

    public var passedCount: Int { results.filter(\.passed).count }
    public var failedCount: Int { results.filter { $0.failure != nil }.count }
    /// Fixtures not run (black-box mode), each with its reason.
    public var skippedCount: Int { results.filter { $0.skipped != nil }.count }
    /// Whether any fixture was itself bad input.
    public var hasBadFixtures: Bool {
        results.contains { if case .badFixture = $0.failure { return true } else { return false } }
    }

    /// The closing line: `N passed, N failed` (and `, N skipped` when any were).
    public var summaryLine: String { "\(passedCount) passed, \(failedCount) failed" + (skippedCount > 0 ? ", \(skippedCount) skipped" : "") }

    /// Whether fixtures were selected and every one of them was skipped: a run that judged nothing.
    public var judgedNothing: Bool { !results.isEmpty && skippedCount == results.count }

    /// Skipped fixtures counted by reason, most fixtures first.
    public var skipGroups: [(fixtures: Int, reason: String)] { Self.counted(results.compactMap(\.skipped)) }

    /// Reasons counted, most frequent first (then by reason).
    static func counted(_ reasons: some Sequence<String>) -> [(fixtures: Int, reason: String)] {
        var counts: [String: Int] = [:]
        for reason in reasons { counts[reason, default: 0] += 1 }
        return counts.map { ($0.value, $0.key) }.sorted { $0.fixtures != $1.fixtures ? $0.fixtures > $1.fixtures : $0.reason < $1.reason }
    }

    /// Failures grouped by JSON pointer and reason, most fixtures first: `(177, "/payload/aps/badge
    /// expected integer, got string")`. A fixture counts once per reason.
    public var failureGroups: [(fixtures: Int, reason: String)] { Self.counted(results.flatMap { $0.failure?.reasons ?? [] }) }

    /// The human report without colours (see ``humanText(colored:)``).
    public var humanText: String { humanText(colored: false) }

    /// The human report: one line per fixture, the strict diff under each failure, the failures
    /// grouped by pointer and reason, then the closing line `N passed, N failed`.
    /// - Parameter colored: PASS in green and FAIL in red (ANSI), for a terminal.
    public func humanText(colored: Bool) -> String {
        let (pass, fail) = colored ? ("\u{1B}[32mPASS\u{1B}[0m  ", "\u{1B}[31mFAIL\u{1B}[0m  ") : ("PASS  ", "FAIL  ")
        var lines: [String] = notices.map { "NOTE  " + $0 }
        if !notices.isEmpty { lines.append("") }
        for result in results {
            var label = result.name.map { "  \($0)" } ?? ""
            if result.isEquivalence { label += " (\(result.dialects.count) variants × \(result.profiles.count) profiles)" }
            if let reason = result.skipped {
                lines.append("SKIP  " + result.path + label)
                lines.append("      " + reason)
                continue
            }
            lines.append((result.passed ? pass : fail) + result.path + label)
            if let failure = result.failure {
                for line in failure.description.split(separator: "\n", omittingEmptySubsequences: false) {
                    lines.append("      " + line)
                }
            }
        }
        func counted(_ title: String, _ groups: [(fixtures: Int, reason: String)]) {
            guard !groups.isEmpty else { return }
            lines.append("")
            lines.append(title)
            let width = String(groups[0].fixtures).count
            for group in groups {
                let count = String(group.fixtures)
                lines.append("  " + String(repeating: " ", count: width - count.count) + count + (group.fixtures == 1 ? " fixture:  " : " fixtures: ") + group.reason)
            }
        }
        counted("Failures by pointer and reason:", failureGroups)
        counted("Skipped by reason:", skipGroups)
        lines.append(summaryLine)
        return lines.joined(separator: "\n")
    }
}
