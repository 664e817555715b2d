import Foundation
import PushBridgeJSON
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// `pushbridge translate` through the real binary: the losses the issue names, exit codes, and
/// that the output is a scenario the tool decides as it is.
@Suite("translate command")
struct TranslateCommandTests {
    static func losses(_ run: ToolRun) throws -> [JSONValue] {
        try JSONParser.parse(Array(run.stdout.utf8))["losses"]?.arrayValue ?? []
    }

    static func loss(_ losses: [JSONValue], _ field: String) -> String? {
        losses.first { $0["field"]?.stringValue == field }?["why"]?.stringValue
    }

    @Test func aMinuteIntervalIntoLegacyIsWidenedAndReported() throws {
        let run = try runTool(["translate", "Fixtures/agora-silent/082-readback-minute-window-by-legacy.json", "--to", "easemob-legacy"])
        #expect(run.status == 0)
        let why = try #require(Self.loss(try Self.losses(run), "user.app.window"))
        #expect(why.contains("22:30–7:15 widened outward to 22–8"))
        #expect(run.stdout.contains(#"{"call": "disableOfflinePushStart", "start": 22, "end": 8}"#))
        #expect(run.stderr.contains("lost: user.app.window (u2)"))
    }

    @Test func mentionOnlyIntoLegacyHasNoEquivalent() throws {
        let run = try runTool(["translate", "Fixtures/agora-silent/004-app-mention-only-not-mentioned.json", "--to", "easemob-legacy", "--strict"])
        #expect(run.status == 3)
        #expect(Self.loss(try Self.losses(run), "user.app.remindType")?.contains("MentionOnly has no equivalent") == true)
        #expect(try JSONParser.parse(Array(run.stdout.utf8))["expect"] == nil, "a lossy translation keeps no expectation")
    }

    @Test func aWindowIntoTencentHasNoEquivalent() throws {
        let run = try runTool(["translate", "Fixtures/easemob-legacy/037-dnd-22-8-at-start.json", "--to", "tencent-tim"])
        #expect(Self.loss(try Self.losses(run), "user.app.window") == "tencent-tim has no do-not-disturb window")
    }

    @Test func pushContentIntoTencentBecomesDescAndKeepsTheNamePrefix() throws {
        let run = try runTool(["translate", "Fixtures/easemob-legacy/008-push-content.json", "--to", "tencent-tim"])
        let document = try JSONParser.parse(Array(run.stdout.utf8))
        let why = try #require(Self.loss(document["losses"]?.arrayValue ?? [], "message.pushContent"))
        #expect(why.contains("offlinePushInfo.desc, which keeps the name prefix"))
        let original = try fixtureDocument("Fixtures/easemob-legacy/008-push-content.json")
        #expect(document["message"]?["offlinePushInfo"]?["desc"] == original["message"]?["ext"]?["em_apns_ext"]?["em_push_content"])
    }

    @Test func aLosslessTranslationDecidesLikeTheSourceThroughTheTool() throws {
        let source = "Fixtures/easemob-legacy/022-badge-override.json"
        let run = try runTool(["translate", source, "--to", "agora-silent", "--strict"])
        #expect(run.status == 0)
        #expect(try Self.losses(run).isEmpty)
        let translated = try temporaryFile(run.stdout)
        let before = try runTool(["decide", source])
        let after = try runTool(["decide", translated])
        #expect(after.status == 0)
        #expect(after.stdout == before.stdout)
        let conform = try runTool(["conform", translated])
        #expect(conform.status == 0, "\(conform.stdout)")
    }

    @Test func badInputExitsTwoWithOneLine() throws {
        let unknown = try runTool(["translate", "Fixtures/easemob-legacy/008-push-content.json", "--to", "line-classic"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr == "pushbridge: --to: expected a dialect: one of easemob-legacy, agora-silent, tencent-tim, found \"line-classic\" [unknown-reference]\n")
        let file = try temporaryFile(#"{"name": "x", "dialect": "easemob-legacy", "now": "2026-03-02T09:15:00Z", "sender": {"user": "a"}, "receiver": {"user": "b", "calls": [{"call": "disableOfflinePushStart", "start": 25, "end": 8}]}, "message": {"id": "1", "target_type": "users", "target": ["b"], "msg": {"type": "txt", "msg": "hi"}}}"#)
        let bad = try runTool(["translate", file, "--to", "agora-silent"])
        #expect(bad.status == 2)
        #expect(bad.stdout.isEmpty)
        #expect(bad.stderr.contains("at /receiver/calls/0/start: expected a whole start hour 0–23, found 25"))
        #expect(bad.stderr.split(separator: "\n").count == 1)
    }
}
