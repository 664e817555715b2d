import PushBridgeConformance
import PushBridgeTestSupport
import Testing

/// Every fixture in `Fixtures/` runs through the same runner as `pushbridge conform`.
@Suite("Fixtures")
struct FixtureTests {
    @Test("fixture passes", arguments: Repository.fixtureFiles())
    func fixturePasses(_ file: String) async {
        let result = await ConformanceRunner().run(file: Repository.root.appendingPathComponent(file).path)
        #expect(result.passed, "\(file)\n\(result.failure?.description ?? "")")
    }

    @Test func easemobLegacyHasAtLeastFortyFixtures() {
        #expect(Repository.fixtureFiles(under: "easemob-legacy").count >= 40)
    }

    @Test func tencentTIMHasAtLeastThirtyFiveFixtures() {
        #expect(Repository.fixtureFiles(under: "tencent-tim").count >= 35)
    }

    @Test func agoraSilentHasAtLeastFortyFiveFixtures() {
        #expect(Repository.fixtureFiles(under: "agora-silent").count >= 45)
    }

    @Test func conformOverTheFolderReportsEveryPass() async throws {
        let report = try await ConformanceRunner().run(paths: [Repository.root.appendingPathComponent("Fixtures/easemob-legacy").path])
        #expect(report.failedCount == 0)
        #expect(report.passedCount >= 40)
        #expect(report.humanText.hasSuffix("\(report.passedCount) passed, 0 failed"))
    }
}
