import Foundation
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The article Running the service: the walk-through shown is `Examples/service/demo.sh`, and it runs as it
/// is against a real `pushbridge serve` (what `make demo-serve` does).
@Suite("Service walk-through")
struct ServiceDemoTests {
    static let script = Repository.root.appendingPathComponent("Examples/service/demo.sh").path

    @Test func theReadmeShowsTheScript() throws {
        try expectArticleShows(script: Self.script, marker: "service", article: "RunningTheService")
    }

    @Test func theScriptRuns() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["bash", Self.script]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHBRIDGE_") }
        environment["PUSHBRIDGE"] = Repository.executable
        environment["PORT"] = String(try ProcessScenario.freePort())
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(text)")
        for line in [
            #"{"group":"g1","members":["u1","u2","u3"]}"#,
            #"{"receiver":"u3","push":false,"reason":"no-device"}],"delivery":"not-configured"}"#,
            #"{"message":"m-1","receivers":2,"pushed":1,"suppressed":{"no-device":1},"repeat":true}"#,
            #""presence":"online","backgroundGraceSeconds":120,"badge":0"#,
            #"{"error":{"code":"missing-key","pointer":"/from""#,
            #"{"group":"g1","members":["u1","u2","u3","u4"]}"#,
            #"{"removed":"0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de","user":"u2"}"#,
            #"{"removed":"u4"}"#,
            #"{"status":"ready"}"#,
            #"pushbridge_decisions_total{dialect="agora-silent",outcome="push"} 1"#,
            // The push task: u1 and u3 have no device, u2 (offline again) is pushed; its progress, then its last state.
            #": finished — 3 decided: 1 pushed, 2 suppressed (no-device 2); 0 delivered, 0 queued, 0 failed"#,
            #""family":"native","labels":[],"anyLabels":[],"state":"finished""#,
        ] {
            #expect(text.contains(line), "missing from the walk-through: \(line)\n\(text)")
        }
    }

}

/// An article shows a script verbatim between `<!-- example:MARKER:begin -->` and `…:end -->`.
/// - Parameters:
///   - path: the script.
///   - marker: the example's marker.
///   - article: the article's name in the `pushbridge` catalog.
func expectArticleShows(script path: String, marker: String, article: String) throws {
    let text = try Documentation.article(article)
    let script = try String(contentsOfFile: path, encoding: .utf8)
    #expect(text.contains("<!-- example:\(marker):begin -->\n```sh\n" + script + "```\n<!-- example:\(marker):end -->"),
        "\(article).md's \(marker) walk-through differs from \(path)")
}
