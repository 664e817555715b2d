import Foundation
import PushBridgeFacade
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// `pushbridge app | apply | members | send | user` and `conform --via-store` from the outside.
@Suite("Store commands")
struct StoreCommandTests {
    @Test func conformViaStorePassesEveryFixture() throws {
        let run = try runTool(["conform", "Fixtures", "--via-store"])
        #expect(run.status == 0, "\(run.stdout.suffix(2000))")
        #expect(run.stdout.hasSuffix("\(Repository.fixtureFiles().count) passed, 0 failed\n"))
    }

    @Test func applyStopsAtARejectedCallAndKeepsTheAcknowledgedOnes() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        let calls = folder + "/calls.json"
        try #"[{"call":"setPreferredNotificationLanguage","languageCode":"EU"},{"call":"setSilentModeForAll","silentModeDuration":10081},{"call":"updatePushDisplayName","displayName":"never"}]"#
            .write(toFile: calls, atomically: true, encoding: .utf8)
        let run = try runTool(["apply", "--db", db, "--dialect", "agora-silent", "--user", "u1", calls])
        #expect(run.status == 2)
        #expect(run.stdout == "{\"applied\":1,\"call\":\"setPreferredNotificationLanguage\"}\n", "calls are counted from 1")
        #expect(run.stderr.contains("calls.json: at /1/silentModeDuration"), "\(run.stderr)")
        let state = try #require(try await PushFacade(store: try SQLiteStateStore(path: db)).user("u1")).state
        #expect(state.language == "EU")
        #expect(state.displayName == nil)

        // --atomic: all or nothing.
        let atomic = try runTool(["apply", "--db", db, "--dialect", "agora-silent", "--user", "u2", "--atomic", calls])
        #expect(atomic.status == 2)
        #expect(atomic.stdout.isEmpty)
        #expect(try await PushFacade(store: try SQLiteStateStore(path: db)).user("u2") == nil)
    }

    @Test func badInputAndStoreFailuresExitWithTheirCodes() async throws {
        let (db, folder) = try ReliabilityScenario.prepareDatabase()
        let message = folder + "/message.json"
        try #"{"id":"m1","target_type":"chatgroups","target":["g1"],"msg":{"type":"txt","msg":"hi"}}"#.write(toFile: message, atomically: true, encoding: .utf8)
        let noSender = try runTool(["send", "--db", db, "--dialect", "easemob-legacy", message])
        #expect(noSender.status == 2)
        #expect(noSender.stderr.contains("message.json: at /from: expected the sender"), "\(noSender.stderr)")
        let withSender = try runTool(["send", "--db", db, "--dialect", "easemob-legacy", "--sender", "u1", message])
        #expect(withSender.status == 0)
        #expect(withSender.stdout.isEmpty, "an empty group reaches nobody")
        let unknownDialect = try runTool(["send", "--db", db, "--dialect", "yahoo", message])
        #expect(unknownDialect.status == 2)
        let unknownProfile = try runTool(["send", "--db", db, "--dialect", "easemob-legacy", "--sender", "u1", "--profile", "nope", message])
        #expect(unknownProfile.status == 2)
        #expect(unknownProfile.stderr.contains("--profile: expected a profile"), "\(unknownProfile.stderr)")
        // decide blames the option too, not the file the scenario came from.
        let decideProfile = try runTool(["decide", "Examples/demo.json", "--profile", "nope"])
        #expect(decideProfile.status == 2 && decideProfile.stderr.hasPrefix("pushbridge: --profile: expected a profile"), "\(decideProfile.stderr)")
        #expect(!decideProfile.stderr.contains("Examples/demo.json"), "\(decideProfile.stderr)")
        let missing = try runTool(["send", "--db", db, "--dialect", "easemob-legacy", folder + "/none.json"])
        #expect(missing.status == 2)
        let unopenable = try runTool(["members", "--db", "/nonexistent-dir/x.db", "--group", "g"])
        #expect(unopenable.status == 4)
        #expect(unopenable.stderr.contains("store error [sqlite"), "\(unopenable.stderr)")
        let stranger = try runTool(["user", "--db", db, "--dialect", "agora-silent", "--user", "nobody", "--presence", "online"])
        #expect(stranger.status == 2)
        #expect(stranger.stderr.contains("--user nobody: at /user: expected a user the store knows"), "\(stranger.stderr)")
        #expect(try await PushFacade(store: try SQLiteStateStore(path: db)).user("nobody") == nil, "a rejected presence change creates no user")
        let known = try runTool(["members", "--db", db, "--group", "g9", "--set", "u1"])
        #expect(known.status == 0, "\(known.stderr)")
        let presence = try runTool(["user", "--db", db, "--dialect", "agora-silent", "--user", "u1", "--presence", "background",
            "--since", "2026-03-02T09:14:00Z", "--timezone", "Asia/Shanghai", "--badge", "4"])
        #expect(presence.status == 0, "\(presence.stderr)")
        let state = try #require(try await PushFacade(store: try SQLiteStateStore(path: db)).user("u1")).state
        #expect(state.badge == 4)
        #expect(state.timeZone.identifier == "Asia/Shanghai")
        let noSince = try runTool(["user", "--db", db, "--dialect", "agora-silent", "--user", "u1", "--presence", "background"])
        #expect(noSince.status != 0)
    }
}
