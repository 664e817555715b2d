import Foundation
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

/// Record mode (`pushbridge conform --record [--force]`), like swift-argument-parser's snapshot
/// recording: writes the built-in engine's current decision into fixtures that have no `expect`
/// (or, with `force`, replaces it). Nothing records on its own: the test suite never calls this.
public struct FixtureRecorder: Sendable {
    public let engine: ScenarioEngine

    public init(engine: ScenarioEngine = ScenarioEngine()) { self.engine = engine }

    /// What happened to one file.
    public enum Outcome: Hashable, Sendable {
        /// `expect` was written.
        case recorded
        /// The fixture already has `expect` (record with `force` to replace it).
        case kept
    }

    /// Records one fixture file if the selection takes it.
    /// - Returns: what happened; `nil` when the selection leaves the file out.
    /// - Throws: `InputError` for a fixture that is bad input (nothing is written).
    public func record(file: String, force: Bool, selection: FixtureSelection = .all) throws -> Outcome? {
        let loaded = try LoadedFixture(file: file)
        guard loaded.selected(by: selection) != nil else { return nil }
        let expect: JSONValue
        let document: JSONValue
        switch loaded {
        case .scenario(let fixture):
            if fixture.scenario.expect != nil && !force { return .kept }
            expect = try expectation(for: fixture)
            document = fixture.document
        case .equivalence(let fixture):
            if !fixture.expectations.isEmpty && !force { return .kept }
            let profiles = fixture.expectations.isEmpty ? Profile.builtIn : fixture.expectations.map(\.profile)
            let first = try engine.prepare(fixture.variants[0].fixture.scenario)
            var byProfile = JSONObject()
            for profile in profiles { byProfile[profile.id] = try JSONParser.parse(engine.decide(first, profile: profile).json) }
            expect = .object(byProfile)
            document = fixture.document
        }
        guard case .object(var object) = document else { return nil }
        object["expect"] = expect
        guard FileManager.default.createFile(atPath: file, contents: Data((JSONWriter.prettyText(.object(object)) + "\n").utf8)) else {
            throw InputError(.unreadableFile, at: .root, expected: "a writable fixture file", found: "could not write", file: file)
        }
        return .recorded
    }

    /// The engine's decision for a scenario, with its query results when the fixture lists queries.
    func expectation(for fixture: Fixture) throws -> JSONValue {
        let prepared = try engine.prepare(fixture.scenario)
        guard case .object(var decision) = try JSONParser.parse(engine.decide(prepared).json) else { return .null }
        let queries = fixture.expectedQueries
        if !queries.isEmpty {
            decision["queries"] = .array(
                try queries.map { query in
                    guard case .object(var o) = query.query else { return query.query }
                    o["result"] = try engine.query(query.query, at: query.pointer, in: prepared)
                    return .object(o)
                })
        }
        return .object(decision)
    }
}
