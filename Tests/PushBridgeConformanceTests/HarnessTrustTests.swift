import Foundation
@testable import PushBridgeConformance
import PushBridgeCore
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

/// The harness cannot be fooled (no leaked answers, no silent passes) and the CLI speaks
/// one language (exit codes, wording, suggestions).
@Suite("Harness trust and CLI consistency")
struct HarnessTrustTests {
    @Test func anImplementationThatEchoesTheAnswerFailsEverything() throws {
        // Prints the fixture's own `expect` back: a harness that trusted the provider's answer passed 221 of 251 fixtures with it.
        let echo = try HarnessTests.script(
            #"python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(json.dumps(d.get("expect", {})))' "$1""#)
        let run = try runTool(["conform", "Fixtures/tencent-tim", "--against", echo])
        #expect(run.status == 1)
        let count = Repository.fixtureFiles(under: "tencent-tim").count
        #expect(run.stdout.hasSuffix("0 passed, \(count) failed\n"), "\(run.stdout.suffix(300))")
    }

    /// A child the harness or the tests start keeps none of this process's descriptors: before, a
    /// PostgreSQL server started with `pg_ctl start` held the in-process service's HTTP connections,
    /// so a client waited for a close the service had made (the framing test's 15 s flake).
    @Test func spawnedChildrenInheritOnlyTheStandardDescriptors() throws {
        let held = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)  // not close-on-exec, as NIO's accepted sockets
        defer { close(held) }
        let name = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(held)")
        let list = ["/bin/sh", "-c", "ls -l /proc/$$/fd"]
        let provider = String(decoding: try ChildProcess.run(list, timeout: 30).stdout, as: UTF8.self)
        #expect(provider.contains(" 1 -> ") && !provider.contains(name), "a provider's shell holds \(name): \(provider)")
        let output = temporaryDirectory() + "/fd.txt"
        #expect(try spawnAndWait(list, output: output) == 0)
        let tool = try String(contentsOfFile: output, encoding: .utf8)
        #expect(tool.contains(" 1 -> ") && !tool.contains(name), "a tool's shell holds \(name): \(tool)")
    }

    @Test func whatTheImplementationGetsHasNoExpectation() throws {
        let fixture = try Fixture(path: "Fixtures/easemob-legacy/001-one-to-one-simple-banner.json")
        #expect(fixture.document["expect"] != nil)
        let given = try JSONParser.parse(fixture.bytes(profile: nil))
        #expect(given["expect"] == nil)
        #expect(given["message"] == fixture.document["message"])
    }

    @Test func zeroSelectedFixturesIsBadInputNamingPathsAndFilters() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-empty-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let none = try runTool(["conform", empty])
        #expect(none.status == 2)
        #expect(none.stderr.contains("no fixtures selected: no *.json fixture under \"\(empty)\""), "\(none.stderr)")
        let filtered = try runTool(["conform", "Fixtures", "--filter", "nomatch", "--dialect", "tencent-tim"])
        #expect(filtered.status == 2)
        #expect(filtered.stderr.contains("matches --filter nomatch, --dialect tencent-tim"), "\(filtered.stderr)")
        #expect(!filtered.stdout.contains("0 passed, 0 failed"))
    }

    @Test func anImplementationThatCannotRunStopsBeforeTheRun() throws {
        for (against, says) in [("./my-impl", "no such file: ./my-impl"), ("no-such-program-here --flag", "command not found: no-such-program-here"),
            ("/tmp", "/tmp is a directory")]
        {
            let run = try runTool(["conform", "Fixtures/tencent-tim", "--against", against])
            #expect(run.status == 2, "\(against)")
            #expect(run.stdout.isEmpty, "no fixture was run for \(against)")
            #expect(run.stderr.contains("pushbridge: --against: \(says)"), "\(run.stderr)")
        }
        // A shell builtin and a quoted path are found.
        #expect(try runTool(["conform", HarnessTests.two[0], "--against", "\"\(Repository.executable)\" decide"]).status == 0)
    }

    @Test func jobsKeepTheReportInFileOrder() throws {
        let serial = try runTool(["conform", "Fixtures/agora-silent", "--jobs", "1"])
        let parallel = try runTool(["conform", "Fixtures/agora-silent", "--jobs", "4"])
        #expect(serial.status == 0)
        #expect(parallel.stdout == serial.stdout)
        // Slow, parallel implementations: the order still follows the files.
        let slow = try HarnessTests.script(#"case "$1" in *001*) sleep 0.3;; esac; ""# + Repository.executable + #"" decide "$1""#)
        let run = try runTool(["conform", "Fixtures/tencent-tim/001-payload-example.json", "Fixtures/tencent-tim/002-c2c-with-nick.json",
            "--against", slow, "--jobs", "2"])
        let lines = run.stdout.split(separator: "\n").filter { $0.hasPrefix("PASS") || $0.hasPrefix("FAIL") }
        #expect(lines.count == 2)
        #expect(lines.first?.contains("001") == true, "\(run.stdout)")
        #expect(try runTool(["conform", "Fixtures/tencent-tim", "--jobs", "0"]).status == 2)
    }

    @Test func failuresAreGroupedByPointerAndReason() throws {
        let wrong = try HarnessTests.script(#"""# + Repository.executable + #"" decide "$1" | sed -e 's/"badge":[0-9]*/"badge":"1"/'"#)
        let run = try runTool(["conform", "Fixtures/tencent-tim", "--against", wrong])
        #expect(run.status == 1)
        let pushed = try Repository.fixtureFiles(under: "tencent-tim").filter { file in
            let expect = try fixtureDocument(file)["expect"]
            return expect?["payload"]?["aps"]?["badge"]?.intValue != nil
        }.count
        #expect(run.stdout.contains("Failures by pointer and reason:\n"))
        #expect(run.stdout.contains("\(pushed) fixtures: /payload/aps/badge expected integer, got string"), "\(run.stdout.suffix(600))")
        #expect(run.stdout.hasSuffix("failed\n"), "the closing line stays last")
    }

    @Test func skipsAreCountedByReasonAndNoticesComeFirstInEveryFormat() throws {
        let native = "sets up through PushBridge's native API (not vendor REST another server answers)"
        let hook = "registers a device from the vendor's client SDK (no REST call does it): give --device-hook CMD"
        let report = ConformanceReport(
            results: [
                .skipped(path: "service/easemob/a.json", name: "a", reason: native), .skipped(path: "service/easemob/b.json", name: "b", reason: hook),
                .skipped(path: "service/tencent/c.json", name: "c", reason: native),
            ],
            notices: ["the capture received no connection during the run"])
        #expect(report.judgedNothing)
        #expect(report.skipGroups.map(\.fixtures) == [2, 1] && report.skipGroups.map(\.reason) == [native, hook])
        let human = report.humanText
        #expect(human.hasPrefix("NOTE  the capture received no connection during the run\n\nSKIP  service/easemob/a.json"), "\(human)")
        #expect(human.hasSuffix("Skipped by reason:\n  2 fixtures: \(native)\n  1 fixture:  \(hook)\n0 passed, 0 failed, 3 skipped"), "\(human)")
        let json = JSONWriter.prettyText(report.json)
        let parsed = try JSONParser.parse(Array(json.utf8))
        #expect(parsed["skipped"]?.intValue == 3)
        #expect(parsed["skipped_by_reason"]?.arrayValue?.first?["fixtures"]?.intValue == 2)
        #expect(parsed["skipped_by_reason"]?.arrayValue?.first?["reason"]?.stringValue == native)
        #expect(parsed["notices"]?.arrayValue?.count == 1)
        let junit = report.junitXML
        #expect(junit.contains("<property name=\"skipped: \(ConformanceReport.escape(native))\" value=\"1\"/>"), "\(junit)")
        #expect(junit.components(separatedBy: "<property name=\"note\"").count == 3, "the notice in each of the two suites")
        // A run that judged something is not "nothing judged"; no skips, no skip lines.
        let ran = ConformanceReport(results: [FixtureResult(path: "a.json", name: "a", failure: nil), .skipped(path: "b.json", name: "b", reason: hook)])
        #expect(!ran.judgedNothing)
        #expect(!ConformanceReport(results: [FixtureResult(path: "a.json", name: "a", failure: nil)]).humanText.contains("Skipped"))
        #expect(!ConformanceReport(results: []).judgedNothing)
    }

    @Test func colorsOnlyOnATerminal() throws {
        let report = ConformanceReport(results: [FixtureResult(path: "a.json", name: "a", failure: nil)])
        #expect(report.humanText(colored: true).hasPrefix("\u{1B}[32mPASS\u{1B}[0m  a.json"))
        #expect(report.humanText == "PASS  a.json  a\n1 passed, 0 failed")
        // Through a pipe (the test's) there are no escapes.
        let run = try runTool(["conform", HarnessTests.two[0]])
        #expect(!run.stdout.contains("\u{1B}["))
    }

    @Test func oneExitCodeTableAndOneWording() throws {
        // Usage errors are bad input: 2, not ArgumentParser's 64.
        let usage = try runTool(["decide"])
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("Missing expected argument"))
        let version = try runTool(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout == PushBridgeVersion.current + "\n")
        // A bad dialect: the same words, and a suggestion, whichever option names it.
        let expected = "expected a dialect: one of easemob-legacy, agora-silent, tencent-tim, found \"tencent\" (did you mean tencent-tim?) [unknown-reference]"
        let db = temporaryDatabase()
        for (arguments, option) in [
            (["conform", "Fixtures/tencent-tim", "--dialect", "tencent"], "--dialect"),
            (["translate", HarnessTests.two[0], "--to", "tencent"], "--to"),
            (["send", "--db", db, "--dialect", "tencent", "m.json"], "--dialect"),
            (["apply", "--db", db, "--dialect", "tencent", "--user", "u", "c.json"], "--dialect"),
            (["mappings", "--from", "tencent", "--to", "agora-silent"], "--from"),
        ] {
            let run = try runTool(arguments)
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stderr == "pushbridge: \(option): \(expected)\n", "\(arguments): \(run.stderr)")
        }
        let profile = try runTool(["conform", "Fixtures/tencent-tim", "--profile", "agora"])
        #expect(profile.stderr.contains("found \"agora\" (did you mean agora-silent?)"), "\(profile.stderr)")
        // Files: "no such file" and "a directory", not "no readable file".
        let missing = try runTool(["decide", "nope.json"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("nope.json: at /: expected a readable file, found no such file"), "\(missing.stderr)")
        let folder = try runTool(["decide", "Fixtures"])
        #expect(folder.stderr.contains("found a directory"), "\(folder.stderr)")
    }

    @Test func storeCommandsSayWhatHappened() throws {
        let db = temporaryDatabase()
        let folder = (db as NSString).deletingLastPathComponent
        // apply before app: the error suggests `pushbridge app` first.
        let calls = folder + "/calls.json"
        try #"[{"call":"initializeSDK","appkey":"a#b","apnsCertName":"agoraTest"}]"#.write(toFile: calls, atomically: true, encoding: .utf8)
        let early = try runTool(["apply", "--db", db, "--dialect", "agora-silent", "--user", "u1", calls])
        #expect(early.status == 2)
        #expect(early.stderr.contains("run `pushbridge app --db \(db) APP.json` first"), "\(early.stderr)")
        // send to a group with no members says so; every send ends with a summary line on stderr.
        let message = folder + "/group.json"
        try #"{"id":"g1m","conversationId":"g-empty","from":"u1","to":"g-empty","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
            .write(toFile: message, atomically: true, encoding: .utf8)
        let send = try runTool(["send", "--db", db, "--dialect", "agora-silent", message])
        #expect(send.status == 0)
        #expect(send.stdout.isEmpty)
        #expect(send.stderr.contains("sent: 0 receivers, 0 pushed (0 deliveries), 0 suppressed"), "\(send.stderr)")
        #expect(send.stderr.contains("group \"g-empty\" has no members: nothing was decided"), "\(send.stderr)")
        _ = try runTool(["members", "--db", db, "--group", "g-empty", "--set", "u1", "u2", "u3"])
        let some = try runTool(["send", "--db", db, "--dialect", "agora-silent", message])
        #expect(some.stderr.contains("a repeat of message g1m: its first decisions, nothing counted"), "\(some.stderr)")
        try #"{"id":"g2m","conversationId":"g-empty","from":"u1","to":"g-empty","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
            .write(toFile: message, atomically: true, encoding: .utf8)
        let second = try runTool(["send", "--db", db, "--dialect", "agora-silent", message])
        #expect(second.stderr == "sent: 2 receivers, 0 pushed (0 deliveries), 2 suppressed (no-device 2)\n", "\(second.stderr)")
    }

    @Test func decidePrettyIsTheSameDecision() throws {
        let compact = try runTool(["decide", "Fixtures/easemob-legacy/085-two-devices-two-certificates.json"])
        let pretty = try runTool(["decide", "Fixtures/easemob-legacy/085-two-devices-two-certificates.json", "--pretty"])
        #expect(pretty.status == 0)
        #expect(pretty.stdout.contains("\n  \"deliveries\": ["))
        #expect(try JSONParser.parse(pretty.stdout) == (try JSONParser.parse(compact.stdout)))
    }

    @Test func translateAFolderWritesEachFileAndSummarisesLosses() throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-translate-\(UUID().uuidString)").path
        let run = try runTool(["translate", "Fixtures/tencent-tim", "--to", "agora-silent", "--output", out])
        #expect(run.status == 0, "\(run.stderr)")
        let count = Repository.fixtureFiles(under: "tencent-tim").count
        #expect(run.stdout.hasSuffix("\(count) translated to agora-silent (1 lossless, \(count - 1) lossy), 0 skipped, 0 bad\n"), "\(run.stdout.suffix(400))")
        #expect(run.stdout.contains("Losses by field:\n"))
        #expect(run.stdout.contains("1 file:  message.androidOptions"))
        let written = try FixtureDiscovery.files(in: [out])
        #expect(written.count == count)
        #expect(FileManager.default.fileExists(atPath: out + "/062-android-config-ignored.json"))
        let strict = try runTool(["translate", "Fixtures/tencent-tim", "--to", "agora-silent", "--output", out, "--strict"])
        #expect(strict.status == 3)
        let noOutput = try runTool(["translate", "Fixtures/tencent-tim", "--to", "agora-silent"])
        #expect(noOutput.status == 2)
        #expect(noOutput.stderr.contains("--output: expected the folder to write translations to"))
    }

    @Test func aPairOfDialectsFitsInOneHundredColumns() throws {
        let run = try runTool(["mappings", "--from", "easemob-legacy", "--to", "tencent-tim"])
        #expect(run.status == 0)
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.allSatisfy { $0.count <= 100 }, "\(lines.filter { $0.count > 100 })")
        #expect(lines.first?.hasPrefix("easemob-legacy → tencent-tim: ") == true)
        #expect(lines.contains { $0.hasPrefix("user.displayStyle") && $0.hasSuffix("LOST") })
        #expect(lines.contains { $0.hasPrefix("user.device.token") && $0.hasSuffix("carried") })
        #expect(try runTool(["mappings", "--from", "easemob-legacy"]).status == 2)
    }
}
