import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

/// What is being tested: anything that turns a fixture into a decision.
public protocol DecisionProvider: Sendable {
    /// The decision JSON for a fixture, as bytes.
    /// - Parameters:
    ///   - fixture: the fixture.
    ///   - profile: the profile to render with (the fixture's own when `nil`).
    /// - Throws: `InputError` for bad fixtures; any other error is the implementation's failure.
    func decision(for fixture: Fixture, profile: Profile?) async throws -> [UInt8]

    /// Query results for a fixture's `expect.queries`, in order; `nil` when the provider cannot answer queries.
    func queryResults(for fixture: Fixture) async throws -> [JSONValue]?
}

/// The built-in engine as a decision provider.
public struct EngineDecisionProvider: DecisionProvider {
    public let engine: ScenarioEngine

    public init(engine: ScenarioEngine = ScenarioEngine()) { self.engine = engine }

    public func decision(for fixture: Fixture, profile: Profile?) throws -> [UInt8] {
        try engine.decide(fixture.scenario, profile: profile).json
    }

    public func queryResults(for fixture: Fixture) throws -> [JSONValue]? {
        let queries = fixture.expectedQueries
        if queries.isEmpty { return [] }
        let prepared = try engine.prepare(fixture.scenario)
        return try queries.map { try engine.query($0.query, at: $0.pointer, in: prepared) }
    }
}

/// Runs fixtures against a decision provider and judges the output strictly.
///
/// This is the code path of `pushbridge conform` and of the test suite; other packages can call
/// it from their own tests with their own ``DecisionProvider``.
public struct ConformanceRunner: Sendable {
    public let provider: any DecisionProvider

    /// - Parameter provider: the implementation under test (the built-in engine by default).
    public init(provider: any DecisionProvider = EngineDecisionProvider()) { self.provider = provider }

    /// Runs every fixture under the given files and folders.
    /// - Parameters:
    ///   - paths: fixture files and folders (searched recursively for `*.json`).
    ///   - selection: the slice to run (everything by default).
    ///   - jobs: how many fixtures run at once (at least 1); the report keeps file order whatever it is.
    ///   - progress: called as fixtures finish, with how many are done, the number of files and the
    ///     path (one call at a time).
    /// - Throws: `InputError` when a path does not exist.
    public func run(
        paths: [String], selection: FixtureSelection = .all, jobs: Int = 1, progress: (@Sendable (Int, Int, String) -> Void)? = nil
    ) async throws -> ConformanceReport {
        let files = try FixtureDiscovery.files(in: paths)
        var results = [FixtureResult?](repeating: nil, count: files.count)
        // At most `jobs` fixtures in flight; each result lands in its file's slot.
        await withTaskGroup(of: (Int, FixtureResult?).self) { group in
            var next = 0
            func start() {
                guard next < files.count else { return }
                let index = next
                next += 1
                group.addTask { (index, await self.timedRun(file: files[index], selection: selection)) }
            }
            for _ in 0..<max(1, jobs) { start() }
            var done = 0
            for await (index, result) in group {
                results[index] = result
                done += 1
                progress?(done, files.count, files[index])
                start()
            }
        }
        return ConformanceReport(results: results.compactMap { $0 })
    }

    /// ``run(file:selection:)`` with its wall-clock duration recorded on the result.
    func timedRun(file: String, selection: FixtureSelection) async -> FixtureResult? {
        let start = ContinuousClock.now
        guard var result = await run(file: file, selection: selection) else { return nil }
        let elapsed = ContinuousClock.now - start
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    /// Runs one fixture file: a scenario, or an equivalence fixture (one with `variants`).
    public func run(file: String) async -> FixtureResult {
        await run(file: file, selection: .all)!
    }

    /// Runs one fixture file if the selection takes it; `nil` when it does not.
    public func run(file: String, selection: FixtureSelection) async -> FixtureResult? {
        do {
            switch try LoadedFixture(file: file).selected(by: selection) {
            case .equivalence(let fixture)?:
                return FixtureResult(path: file, name: fixture.name, failure: await judge(fixture), dialects: fixture.variants.map(\.dialect),
                    profiles: fixture.expectations.map(\.profile.id), isEquivalence: true)
            case .scenario(let fixture)?:
                let scenario = fixture.scenario
                return FixtureResult(path: file, name: scenario.name, failure: await judge(fixture), dialects: [scenario.dialect],
                    profiles: [scenario.profile ?? scenario.dialect])
            case nil:
                return nil
            }
        } catch let error as InputError {
            guard selection.takes(path: file, name: nil) else { return nil }
            return FixtureResult(path: file, name: nil, failure: .badFixture(error))
        } catch {
            return FixtureResult(path: file, name: nil, failure: .implementation("\(error)"))
        }
    }

    /// Judges an equivalence fixture: every variant with every expected profile, then the
    /// variants' canonical state against the first variant's; `nil` when it all passes.
    public func judge(_ fixture: EquivalenceFixture) async -> FixtureFailure? {
        if fixture.expectations.isEmpty { return .noExpectation }
        var failures: [VariantFailure] = []
        for variant in fixture.variants {
            for expectation in fixture.expectations {
                if let failure = await judge(variant.fixture, expected: expectation.decision, profile: expectation.profile) {
                    if case .badFixture(let error) = failure { return .badFixture(EquivalenceFixture.locate(error, inVariant: variant.dialect)) }
                    failures.append(VariantFailure(dialect: variant.dialect, profile: expectation.profile.id, failure: failure))
                }
            }
        }
        let engine = ScenarioEngine()
        do {
            let prepared = try fixture.variants.map { variant in
                do {
                    return try engine.prepare(variant.fixture.scenario)
                } catch let error as InputError {
                    throw EquivalenceFixture.locate(error, inVariant: variant.dialect)
                }
            }
            for (variant, state) in zip(fixture.variants, prepared).dropFirst() {
                let differences = prepared[0].stateDifferences(from: state)
                if !differences.isEmpty {
                    failures.append(VariantFailure(dialect: variant.dialect, comparedWith: fixture.variants[0].dialect,
                        differences: differences.map { "\($0.party) \($0.difference)" }))
                }
            }
        } catch let error as InputError {
            return .badFixture(error.in(file: fixture.path))
        } catch {
            return .implementation("\(error)")
        }
        return failures.isEmpty ? nil : .variants(failures)
    }

    /// Judges one loaded fixture; `nil` when it passes.
    public func judge(_ fixture: Fixture) async -> FixtureFailure? {
        guard let expected = fixture.expectedDecision else { return .noExpectation }
        return await judge(fixture, expected: expected, profile: nil)
    }

    /// Judges a fixture against an expected decision, rendered with a profile (its own when `nil`).
    func judge(_ fixture: Fixture, expected: JSONObject, profile: Profile?) async -> FixtureFailure? {
        var differences: [JSONDifference] = []
        do {
            let got = try await provider.decision(for: fixture, profile: profile)
            differences += try Self.compare(expectedDecision: expected, got: got)
            let queries = profile == nil ? fixture.expectedQueries : []
            if !queries.isEmpty {
                // A provider that answers no queries (a command, a server) is judged on its decisions.
                for (query, result) in zip(queries, try await provider.queryResults(for: fixture) ?? []) {
                    var writer = JSONWriter()
                    writer.write(result)
                    differences += try StrictComparison.differences(expected: query.result, got: writer.bytes).map {
                        JSONDifference(pointer: JSONPointer(tokens: query.pointer.tokens + ["result"] + $0.pointer.tokens), expected: $0.expected, got: $0.got)
                    }
                }
            }
        } catch let error as InputError {
            return .badFixture(error.in(file: fixture.path))
        } catch let error as StrictComparison.MalformedDocument {
            return error.role == .expected ? .badFixture(error.error.in(file: fixture.path)) : .implementation(error.description)
        } catch {
            return .implementation("\(error)")
        }
        return differences.isEmpty ? nil : .mismatch(differences)
    }

    /// Compares the keys an expectation lists against a decision document (strict, typed).
    /// - Parameters:
    ///   - expected: the expected keys (`push`, `payload`, `deliveries`, `reason`).
    ///   - got: the decision JSON produced.
    /// - Returns: the differences, with pointers into the decision (`/payload/aps/badge`).
    public static func compare(expectedDecision expected: JSONObject, got: [UInt8]) throws -> [JSONDifference] {
        let decision: JSONValue
        do {
            decision = try JSONParser.parse(got)
        } catch let error as InputError {
            throw StrictComparison.MalformedDocument(role: .got, error: error)
        }
        guard case .object(let gotObject) = decision else {
            return [JSONDifference(pointer: .root, expected: .init(text: "a decision object", type: "object"),
                got: .init(text: decision.compactText, type: decision.typeName))]
        }
        var subset = JSONObject()
        for key in expected.keys { subset[key] = gotObject[key] }
        var expectedWriter = JSONWriter()
        expectedWriter.write(.object(expected))
        var gotWriter = JSONWriter()
        gotWriter.write(.object(subset))
        return try StrictComparison.differences(expected: expectedWriter.bytes, got: gotWriter.bytes)
    }
}
