import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "Remove a device token from whichever user has it.",
        discussion: "Prints {\"removed\":token,\"user\":id}. A token no user has is bad input (exit 2); nothing changes.")

    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("delete"), help: "The device token to remove (hex, any case).")
    var token: String

    func run() async throws {
        let facade = try await store.facade()
        let owner = try await rejectingBadInput(file: "--delete") { try await reportingStoreErrors { try await facade.removeDevice(token: token) } }
        var w = JSONWriter()
        w.raw("{\"removed\":")
        w.string(token.lowercased())
        w.raw(",\"user\":")
        w.string(owner)
        w.raw("}\n")
        writeOut(w.bytes)
    }
}
