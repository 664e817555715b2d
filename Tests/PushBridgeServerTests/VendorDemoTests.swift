import Foundation
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The article Drop-in for vendor REST: the curl walk-through shown is `Examples/vendor-rest/curl.sh`,
/// and it runs as it is against a real `pushbridge serve` (what `make demo-vendor-rest` does).
@Suite("Vendor REST walk-through")
struct VendorDemoTests {
    static let script = Repository.root.appendingPathComponent("Examples/vendor-rest/curl.sh").path

    @Test func theReadmeShowsTheScript() throws {
        try expectArticleShows(script: Self.script, marker: "vendor-rest", article: "VendorREST")
    }

    @Test func theScriptRuns() async throws {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHBRIDGE_") }
        environment["PUSHBRIDGE"] = Repository.executable
        environment["PORT"] = String(try ProcessScenario.freePort())
        let run = try await runOffThePool("/usr/bin/env", ["bash", Self.script], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        for line in [
            #""entities":[{"type":"user","username":"bob","activated":true,"notification_display_style":1"#,
            #""data":{"bob":"success"}"#,
            #""payload":{"aps":{"alert":{"body":"alice:Lunch?"},"badge":1,"sound":"default"},"f":"alice""#,
            #"{"ActionStatus":"OK","ErrorInfo":"","ErrorCode":0,"MsgTime":"#,
            #""payload":{"aps":{"alert":{"title":"Alice","body":"hello"},"badge":1,"sound":"dingdong.aiff"}}"#,
            #"{"ActionStatus":"FAIL","ErrorInfo":"usersig is not a UserSig v2 (not Tencent's URL-safe base64)","ErrorCode":70003}"#,
            // Vendor REST alone: a device binding, a group and its message pushed to the bound device.
            #""entities":[{"device_id":"bob-iphone","device_token":"a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90","notifier_name":"chat-dev"}]"#,
            #""data":[{"owner":"alice"},{"member":"bob"}]"#,
            #""payload":{"aps":{"alert":{"body":"alice:Noon at the usual place"},"badge":2,"sound":"default"}"#,
            #"{"ActionStatus":"OK","ErrorInfo":"","ErrorCode":0,"GroupId":"lunch"}"#,
            #""MsgSeq":1}"#,
        ] {
            #expect(run.stdout.contains(line), "missing from the walk-through: \(line)\n\(run.stdout)")
        }
        #expect(!run.stdout.contains("YXA6-client-secret"), "the client secret must not come back in an answer")
        #expect(!run.stdout.contains("a-tencent-secret-key-from-the-console"), "the Tencent secret key must not come back in an answer")
    }

    @Test func theUserSigCommandMakesWhatTencentsGeneratorMakes() throws {
        let keyFile = try temporaryFile("5bd2850fff3ecb11d7c805251c51ee463a25727bddc2385f3fa8bfee1bb93b5e\n", name: "tencent.key")
        let run = try runTool(["usersig", "--sdkappid", "1400000000", "--identifier", "xiaojun", "--secret-key-file", keyFile])
        #expect(run.status == 0, "\(run.stderr)")
        let sig = run.stdout.trimmingCharacters(in: .newlines)
        // Verified as the service verifies it.
        #expect(throws: Never.self) {
            try PushBridgeVendorRESTProbe.verify(sig, sdkAppID: 1_400_000_000, identifier: "xiaojun", key: "5bd2850fff3ecb11d7c805251c51ee463a25727bddc2385f3fa8bfee1bb93b5e")
        }
        let missing = try runTool(["usersig", "--sdkappid", "1"], environment: [:])
        #expect(missing.status == 2 && missing.stderr.contains("--secret-key-file"), "\(missing.stderr)")
    }
}
