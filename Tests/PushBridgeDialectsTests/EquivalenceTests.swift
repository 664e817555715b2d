import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// `Fixtures/equivalence/`: one intent per file, every variant × every profile, equal canonical state.
@Suite("Equivalence")
struct EquivalenceTests {
    static let one = "Fixtures/equivalence/01-one-to-one-text-summary.json"

    static func judge(_ document: JSONValue) async throws -> FixtureFailure? {
        await ConformanceRunner().judge(try EquivalenceFixture(path: "test.json", document: document))
    }

    @Test func atLeastTwentyFixturesEachCheckedAgainstAllThreeProfiles() throws {
        let files = Repository.fixtureFiles(under: "equivalence")
        #expect(files.count >= 20)
        var dialectsUsed = Set<String>()
        for file in files {
            let fixture = try EquivalenceFixture(path: file, document: fixtureDocument(file))
            #expect(Set(fixture.expectations.map(\.profile.id)) == Set(Profile.builtIn.map(\.id)), "\(file)")
            #expect(fixture.variants.count >= 2, "\(file)")
            dialectsUsed.formUnion(fixture.variants.map(\.dialect))
        }
        #expect(dialectsUsed == ["easemob-legacy", "agora-silent", "tencent-tim"])
    }

    @Test func conformOverTheFolderPassesEveryFixture() throws {
        let run = try runTool(["conform", "Fixtures/equivalence"])
        #expect(run.status == 0)
        let count = Repository.fixtureFiles(under: "equivalence").count
        #expect(run.stdout.hasSuffix("\(count) passed, 0 failed\n"))
    }

    @Test func aVariantThatRendersDifferentlyFailsWithTheProfileAndPointer() async throws {
        let document = try fixtureDocument(Self.one).setting("/variants/agora-silent/message/body/text", to: "hullo")
        let failure = try #require(try await Self.judge(document))
        let text = failure.description
        #expect(text.contains("agora-silent rendered as tencent-tim:"))
        #expect(text.contains("/payload/aps/alert: expected \"Alice: hello\" (string), got \"Alice: hullo\" (string)"))
        #expect(!text.contains("easemob-legacy rendered as"))
    }

    @Test func variantsThatReachDifferentCanonicalStateFailWithTheDifference() async throws {
        // The legacy variant drops its MessageSummary call; expectations are changed to match what it renders,
        // so only the canonical comparison can catch it.
        var document = try fixtureDocument(Self.one).setting("/variants/easemob-legacy/receiver/calls/2", to: nil)
        document = document.setting("/variants/agora-silent/receiver/calls/2", to: nil)
        document = document.setting("/variants", to: .object(JSONObject([
            ("easemob-legacy", document["variants"]!["easemob-legacy"]!), ("agora-silent", document["variants"]!["agora-silent"]!),
        ])))
        document = document.setting("/expect/easemob-legacy/payload/aps/alert/body", to: "you got a new message")
            .setting("/expect/agora-silent/payload/aps/alert/body", to: "You have a new message")
            .setting("/expect/tencent-tim/payload/aps/alert", to: "You have a new message")
        #expect(try await Self.judge(document) == nil)
        document = document.setting("/variants/agora-silent/receiver/calls/2", to: ["call": "setPreferredNotificationLanguage", "languageCode": "de"])
        let failure = try #require(try await Self.judge(document))
        #expect(failure.description.contains("canonical state: easemob-legacy vs agora-silent:\n  receiver user.language: (none) ≠ \"de\""))
    }

    @Test func badInputInsideAVariantNamesThePointerInTheFile() async throws {
        let document = try fixtureDocument(Self.one).setting("/variants/tencent-tim/receiver/calls/0/busiId", to: "x")
        let failure = try #require(try await Self.judge(document))
        guard case .badFixture(let error) = failure else { Issue.record("expected a bad fixture, got \(failure)"); return }
        #expect(error.pointer.description == "/variants/tencent-tim/receiver/calls/0/busiId")
        #expect(error.code == .wrongType)
    }

    @Test func anUnknownProfileOrDialectIsBadInput() throws {
        let base = try fixtureDocument(Self.one)
        var failedDocument = base.setting("/expect/line-classic", to: ["push": false, "reason": "muted"])
        #expect(throws: InputError.self) { _ = try EquivalenceFixture(path: "x.json", document: failedDocument) }
        failedDocument = base.setting("/variants/line-classic", to: base["variants"]!["agora-silent"]!)
        do {
            _ = try EquivalenceFixture(path: "x.json", document: failedDocument)
            Issue.record("accepted an unknown dialect")
        } catch let error as InputError {
            #expect(error.pointer.description == "/variants/line-classic")
            #expect(error.description.hasPrefix("x.json: at /variants/line-classic: expected a dialect"))
        }
    }
}
