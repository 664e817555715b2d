import Foundation
import PushBridgeConformance
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// The conformance harness as a product: other implementations, reports, record mode, slices.
@Suite("Conformance harness")
struct HarnessTests {
    /// Writes an executable shell script and returns its path.
    static func script(_ body: String) throws -> String {
        let path = try temporaryFile("#!/bin/sh\n" + body + "\n", name: "impl.sh")
        chmod(path, 0o755)
        return path
    }

    static let two = ["Fixtures/easemob-legacy/001-one-to-one-simple-banner.json", "Fixtures/tencent-tim/002-c2c-with-nick.json"]

    @Test func aWrongImplementationFailsWithDiffsNamingThePointers() throws {
        let wrong = try Self.script(
            "\"\(Repository.executable)\" decide \"$1\" | sed -e 's/\"badge\":[0-9]*/\"badge\":true/' -e 's/,\"sound\":\"[^\"]*\"//'")
        let run = try runTool(["conform"] + Self.two + ["--against", wrong])
        #expect(run.status == 1)
        #expect(run.stdout.contains("/payload/aps/badge: expected 1 (integer), got true (boolean)"))
        #expect(run.stdout.contains("/payload/aps/sound: expected \"default\" (string), got nothing"))
        #expect(run.stdout.hasSuffix("0 passed, 2 failed\n"))
    }

    @Test func pushbridgeDecideItselfPassesEveryFixture() throws {
        let run = try runTool(["conform", "Fixtures", "--against", "\"\(Repository.executable)\" decide"])
        #expect(run.status == 0, "\(run.stdout.split(separator: "\n").filter { !$0.hasPrefix("PASS") }.prefix(20).joined(separator: "\n"))")
        #expect(run.stdout.hasSuffix("\(Repository.fixtureFiles().count) passed, 0 failed\n"))
    }

    @Test func crashesTimeoutsAndInvalidJSONAreFailedFixturesNotHarnessCrashes() throws {
        let cases: [(String, String)] = [
            ("kill -SEGV $$", "crashed (signal 11)"),
            ("sleep 30", "timed out after 1 s"),
            ("echo '{\"push\": tru'", "malformed-json"),
            ("echo nope >&2; exit 3", "exited with status 3: nope"),
        ]
        for (body, reason) in cases {
            let run = try runTool(["conform", Self.two[0], "--against", try Self.script(body), "--timeout", "1"])
            #expect(run.status == 1, "\(body)")
            #expect(run.stdout.contains(reason), "\(body): \(run.stdout)")
            #expect(run.stdout.hasSuffix("0 passed, 1 failed\n"))
        }
    }

    @Test func aServerIsJudgedTheSameWay() throws {
        let engine = ScenarioEngine()
        let server = try LoopbackServer { body in
            guard let document = try? JSONParser.parse(body), let scenario = try? Scenario(document), let decision = try? engine.decide(scenario) else {
                return (400, Array("{\"error\": \"bad scenario\"}".utf8))
            }
            var bytes = decision.json
            if scenario.dialect == "tencent-tim" { bytes = Array(String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\"badge\":1", with: "\"badge\":1.0").utf8) }
            return (200, bytes)
        }
        defer { server.stop() }
        let run = try runTool(["conform"] + Self.two + ["Fixtures/equivalence/05-custom-sound.json", "--against", server.url])
        #expect(run.status == 1)
        #expect(run.stdout.contains("PASS  Fixtures/easemob-legacy/001"))
        #expect(run.stdout.contains("/payload/aps/badge: expected 1 (integer), got 1.0 (number)"))
        #expect(run.stdout.contains("tencent-tim rendered as agora-silent:"), "equivalence variants are POSTed with their profile")
        #expect(run.stdout.hasSuffix("1 passed, 2 failed\n"))

        // Nothing listening: stopped before the run, exit 2, no fixture judged.
        let unreachable = try runTool(["conform", Self.two[0], "--against", "http://127.0.0.1:1/decide", "--timeout", "2"])
        #expect(unreachable.status == 2)
        #expect(unreachable.stdout.isEmpty)
        #expect(unreachable.stderr.contains("pushbridge: --against: nothing answers at 127.0.0.1:1"), "\(unreachable.stderr)")
    }

    @Test func junitReportValidatesWithTheRightCounts() throws {
        let junit = try temporaryFile("", name: "report.xml")
        let wrong = try Self.script("\"\(Repository.executable)\" decide \"$1\" | sed -e 's/\"badge\":1/\"badge\":2/'")
        let files = Self.two + ["Fixtures/equivalence/07-silent-message.json", "Fixtures/equivalence/01-one-to-one-text-summary.json"]
        let run = try runTool(["conform"] + files + ["--against", wrong, "--junit", junit])
        #expect(run.status == 1)
        let data = try Data(contentsOf: URL(fileURLWithPath: junit))
        let counter = JUnitCounter()
        let parser = XMLParser(data: data)
        parser.delegate = counter
        #expect(parser.parse(), "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "")")
        // One testcase per fixture, as in the human report: 2 scenarios + 2 equivalence fixtures.
        #expect(counter.testcases == 4)
        // badge 1 → 2 breaks both scenarios and the pushed intent; the silent message passes
        #expect(counter.failures == 3)
        #expect(counter.suiteAttributes["testsuites"]?["tests"] == "4")
        #expect(counter.suiteAttributes["testsuites"]?["failures"] == "3")
        #expect(run.stdout.hasSuffix("1 passed, 3 failed\n"), "the human report counts the same")
        // Every testcase carries its time in seconds.
        #expect(counter.times.count == 4)
        #expect(counter.times.allSatisfy { Double($0).map { $0 >= 0 } == true }, "\(counter.times)")
        #expect(counter.failureMessages.contains { $0.contains("/payload/aps/badge: expected 1 (integer), got 2 (integer)") })
    }

    @Test func jsonReportIsMachineReadable() throws {
        let run = try runTool(["conform"] + Self.two + ["--format", "json"])
        #expect(run.status == 0)
        let report = try JSONParser.parse(Array(run.stdout.utf8))
        #expect(report["passed"] == 2)
        #expect(report["fixtures"]?.arrayValue?.first?["profiles"] == ["easemob-legacy"])
        let bad = try temporaryFile(#"{"name": 1}"#)
        let failed = try runTool(["conform", bad, "--format", "json"])
        #expect(failed.status == 2)
        let entry = try JSONParser.parse(Array(failed.stdout.utf8))["fixtures"]?.arrayValue?.first
        #expect(entry?["failure"]?["kind"] == "bad-fixture")
        #expect(entry?["failure"]?["error"]?["pointer"] == "/name")
    }

    @Test func recordWritesMissingExpectationsAndForceReplacesThem() throws {
        var document = try fixtureDocument("Fixtures/easemob-legacy/076-readback-window-by-agora-and-tencent.json")
        let expected = document["expect"]!
        document = document.setting("/expect", to: nil)
        var writer = JSONWriter()
        writer.write(document)
        let file = try temporaryFile(String(decoding: writer.bytes, as: UTF8.self), name: "no-expect.json")

        let unjudged = try runTool(["conform", file])
        #expect(unjudged.status == 1)
        #expect(unjudged.stdout.contains("the fixture has no \"expect\" (record one with --record)"))

        let recorded = try runTool(["conform", file, "--record"])
        #expect(recorded.status == 0)
        #expect(recorded.stdout.hasSuffix("1 recorded, 0 kept\n"))
        var written = try JSONParser.parse(FixtureDiscovery.read(file))
        #expect(written["expect"]?["payload"] == expected["payload"])
        #expect(written["expect"]?["queries"] == nil, "no queries to record when there were none")
        #expect(try runTool(["conform", file]).status == 0)

        let again = try runTool(["conform", file, "--record"])
        #expect(again.stdout.hasSuffix("0 recorded, 1 kept\n"))

        // --force replaces the expectation and re-answers the queries it lists.
        var stale = written.setting("/expect", to: expected).setting("/expect/payload/aps/badge", to: 7).setting("/expect/queries/0/result", to: [:])
        writer = JSONWriter()
        writer.write(stale)
        try Data(writer.bytes).write(to: URL(fileURLWithPath: file))
        #expect(try runTool(["conform", file]).status == 1)
        #expect(try runTool(["conform", file, "--record", "--force"]).status == 0)
        written = try JSONParser.parse(FixtureDiscovery.read(file))
        #expect(written["expect"] == expected)
        stale = .null

        let misuse = try runTool(["conform", file, "--force"])
        #expect(misuse.status != 0)
        #expect(misuse.stderr.contains("--force only goes with --record"))
    }

    @Test func slicesByFilterDialectAndProfile() throws {
        func passed(_ arguments: [String]) throws -> Int {
            let run = try runTool(["conform", "Fixtures"] + arguments + ["--format", "json"])
            #expect(run.status == 0, "\(arguments)")
            return Int(try JSONParser.parse(Array(run.stdout.utf8))["passed"]?.intValue ?? -1)
        }
        #expect(try passed(["--filter", "readback"]) == Repository.fixtureFiles().filter { $0.contains("readback") }.count)
        #expect(try passed(["--filter", "*/equivalence/0*"]) == 9)
        let tencent = try passed(["--dialect", "tencent-tim"])
        let tencentEquivalence = try Repository.fixtureFiles(under: "equivalence").filter { try fixtureDocument($0)["variants"]?["tencent-tim"] != nil }.count
        #expect(tencent == Repository.fixtureFiles(under: "tencent-tim").count + tencentEquivalence)
        let agoraProfile = try passed(["--profile", "agora-silent"])
        #expect(agoraProfile > Repository.fixtureFiles(under: "agora-silent").count, "other dialects' fixtures rendered with the agora-silent profile count too")
        let unknown = try runTool(["conform", "Fixtures", "--dialect", "line"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--dialect: expected a dialect: one of easemob-legacy, agora-silent, tencent-tim"))
    }

    @Test func longValuesAreShortenedAroundTheFirstDifference() {
        let expected = String(repeating: "a", count: 200) + "XYZ" + String(repeating: "b", count: 200)
        let got = String(repeating: "a", count: 200) + "XQZ" + String(repeating: "b", count: 200)
        let line = JSONDifference(pointer: JSONPointer("/payload/aps/alert/body")!, expected: .init(text: "\"\(expected)\"", type: "string"),
            got: .init(text: "\"\(got)\"", type: "string")).description
        #expect(line.count < 220)
        #expect(line.hasPrefix("/payload/aps/alert/body: expected …aaaaaaaaaaaaaaaaaaaXYZbbb"))
        #expect(line.contains("got …aaaaaaaaaaaaaaaaaaaXQZbbb"))
        #expect(line.hasSuffix("… (string)"))
    }
}

/// Counts JUnit elements and keeps failure messages.
final class JUnitCounter: NSObject, XMLParserDelegate {
    var testcases = 0
    var failures = 0
    var suiteAttributes: [String: [String: String]] = [:]
    var failureMessages: [String] = []
    var times: [String] = []
    private var text = ""

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        switch name {
        case "testcase":
            testcases += 1
            if let time = attributes["time"] { times.append(time) }
        case "failure", "error":
            failures += 1
            text = attributes["message"] ?? ""
        case "testsuites": suiteAttributes[name] = attributes
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "failure" || name == "error" { failureMessages.append(text) }
    }
}
