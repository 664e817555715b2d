import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Set the app configuration of a database: certificates and templates.",
        discussion: "APP.json is the scenario `app` object: {\"certificates\": [{\"name\" or \"busiId\", \"bundleId\", \"environment\"}], \"templates\": [...]}.")

    @OptionGroup var store: StoreOptions

    @Argument(help: "The app configuration file.")
    var file: String

    func run() async throws {
        let facade = try await store.facade()
        try await rejectingBadInput(file: file) {
            let app = try Scenario.app(from: try JSONParser.parse(try FixtureDiscovery.read(file)), at: .root)
            try await reportingStoreErrors { try await facade.configure(app) }
        }
    }
}
