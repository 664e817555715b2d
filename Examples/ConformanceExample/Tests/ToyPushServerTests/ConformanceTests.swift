import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeJSON
import Testing
import ToyPushServer
import XCTest

/// The implementation under test, as PushBridge's harness sees it.
struct ToyProvider: DecisionProvider {
    let server: ToyPushServer

    func decision(for fixture: Fixture, profile: Profile?) throws -> [UInt8] {
        try server.handle(fixture.bytes(profile: profile))
    }

    /// This server answers no settings queries: `expect.queries` are skipped.
    func queryResults(for fixture: Fixture) throws -> [JSONValue]? { nil }
}

/// PushBridge's fixtures, from the checkout this example lives in.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../../../Fixtures").standardizedFileURL.path

// Swift Testing: one test over every fixture, failing with the harness's own report.
@Test func toyServerConformsToPushBridge() async throws {
    let report = try await ConformanceRunner(provider: ToyProvider(server: ToyPushServer())).run(paths: [fixtures])
    #expect(report.failedCount == 0, "\(report.humanText)")
    #expect(report.passedCount > 200)
}

// Swift Testing, one case per fixture file of a slice.
@Test(arguments: try! FixtureDiscovery.files(in: [fixtures + "/equivalence"]))
func equivalenceFixture(_ file: String) async {
    let result = await ConformanceRunner(provider: ToyProvider(server: ToyPushServer())).run(file: file)
    #expect(result.passed, "\(result.failure?.description ?? "")")
}

// The harness catches a broken implementation, with the pointer of what is wrong.
@Test func aBadgeBugIsCaught() async throws {
    let report = try await ConformanceRunner(provider: ToyProvider(server: ToyPushServer(forgetsBadgeIncrement: true)))
        .run(paths: [fixtures], selection: FixtureSelection(dialect: "easemob-legacy"))
    #expect(report.failedCount > 0)
    #expect(report.humanText.contains("/payload/aps/badge: expected 1 (integer), got 0 (integer)"))
}

// XCTest: the same check for projects that have not moved to Swift Testing.
final class ToyServerXCTests: XCTestCase {
    func testConformsToPushBridge() async throws {
        let report = try await ConformanceRunner(provider: ToyProvider(server: ToyPushServer())).run(paths: [fixtures])
        XCTAssertEqual(report.failedCount, 0, report.humanText)
    }
}
