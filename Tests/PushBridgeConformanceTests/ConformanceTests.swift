import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

@Suite("Strict judging")
struct ConformanceTests {
    static let mutableContentFixture = "Fixtures/easemob-legacy/014-mutable-content.json"

    @Test func mutableContentTrueWhereTheEngineEmitsOneFailsWithTypedDiff() async throws {
        let document = try fixtureDocument(Self.mutableContentFixture)
            .setting("/expect/payload/aps/mutable-content", to: .bool(true))
        let fixture = try Fixture(path: "mutated.json", document: document)
        let failure = try #require(await ConformanceRunner().judge(fixture))
        guard case .mismatch(let diffs) = failure else {
            Issue.record("expected a mismatch, got \(failure)")
            return
        }
        #expect(diffs.count == 1)
        #expect(diffs.first?.pointer.description == "/payload/aps/mutable-content")
        #expect(diffs.first?.expected?.type == "boolean")
        #expect(diffs.first?.got?.type == "integer")
        #expect(failure.description == "/payload/aps/mutable-content: expected true (boolean), got 1 (integer)")
    }

    @Test func theUnmodifiedFixturePasses() async throws {
        let fixture = try Fixture(path: "original.json", document: try fixtureDocument(Self.mutableContentFixture))
        #expect(await ConformanceRunner().judge(fixture) == nil)
    }

    @Test func onlyTheListedExpectationKeysAreCompared() async throws {
        let document = try fixtureDocument(Self.mutableContentFixture)
            .setting("/expect/deliveries", to: nil)
        #expect(await ConformanceRunner().judge(try Fixture(path: "subset.json", document: document)) == nil)
    }

    @Test func aWrongReasonIsReported() async throws {
        let document = try fixtureDocument("Fixtures/easemob-legacy/026-silent-message.json")
            .setting("/expect/reason", to: "muted")
        let failure = try #require(await ConformanceRunner().judge(try Fixture(path: "reason.json", document: document)))
        #expect(failure.description == "/reason: expected \"muted\" (string), got \"ignored\" (string)")
    }

    @Test func aWrongQueryResultIsReported() async throws {
        let document = try fixtureDocument("Fixtures/easemob-legacy/069-query-push-options-defaults.json")
            .setting("/expect/queries/0/result/noDisturbingEndH", to: .int(24))
        let failure = try #require(await ConformanceRunner().judge(try Fixture(path: "query.json", document: document)))
        #expect(failure.description == "/expect/queries/0/result/noDisturbingEndH: expected 24 (integer), got 0 (integer)")
    }

    @Test func aFixtureWithoutExpectationFails() async throws {
        let document = try fixtureDocument(Self.mutableContentFixture).setting("/expect", to: nil)
        #expect(await ConformanceRunner().judge(try Fixture(path: "none.json", document: document)) == .noExpectation)
    }

    /// A provider standing in for another implementation: the harness judges whatever it returns.
    struct CannedProvider: DecisionProvider {
        let bytes: [UInt8]
        func decision(for fixture: Fixture, profile: Profile?) throws -> [UInt8] { bytes }
        func queryResults(for fixture: Fixture) throws -> [JSONValue]? { nil }
    }

    @Test func anotherImplementationsInvalidJSONIsAFailureNotACrash() async throws {
        let fixture = try Fixture(path: "f.json", document: try fixtureDocument(Self.mutableContentFixture))
        let failure = await ConformanceRunner(provider: CannedProvider(bytes: Array("{\"push\":true,\"push\":true}".utf8))).judge(fixture)
        guard case .implementation(let reason)? = failure else {
            Issue.record("expected an implementation failure, got \(String(describing: failure))")
            return
        }
        #expect(reason.contains("duplicate"))
    }

    @Test func anotherImplementationsBadgeAsBooleanIsNamed() async throws {
        let fixture = try Fixture(path: "f.json", document: try fixtureDocument(Self.mutableContentFixture))
        var expected = ScenarioDecisionText.mutableContent
        expected = expected.replacingOccurrences(of: "\"badge\":1", with: "\"badge\":true")
        let failure = await ConformanceRunner(provider: CannedProvider(bytes: Array(expected.utf8))).judge(fixture)
        #expect(failure?.description == "/payload/aps/badge: expected 1 (integer), got true (boolean)")
    }
}
