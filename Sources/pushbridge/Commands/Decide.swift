import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

struct Decide: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the decision for one scenario as one JSON object.",
        discussion: """
            {"push":true,"payload":{…},"deliveries":[{"device":{"token":…,"environment":…},"headers":{…}},…]} or \
            {"push":false,"reason":"…"}. One delivery per device of the receiver, newest binding first.
            """)

    @Argument(help: "A scenario file (the fixture format; `expect` is not needed).")
    var file: String

    @Option(help: "Render with this profile instead of the scenario's: easemob-legacy, agora-silent or tencent-tim.")
    var profile: String?

    @Flag(help: "Indent the JSON for reading (the keys and values stay exactly as decided).")
    var pretty = false

    func run() throws {
        let engine = ScenarioEngine()
        // The option is the command line's, not the file's: judged first, and blamed on `--profile`.
        let chosen = try profileOption(profile, in: engine.registry)
        let decision = try rejectingBadInput(file: file) { () throws -> PushDecision in
            try engine.decide(try Fixture(path: file).scenario, profile: chosen)
        }
        print(pretty ? JSONWriter.prettyText(try JSONParser.parse(decision.json)) : decision.jsonText)
    }
}
