import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

struct Mappings: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the cross-dialect matrix built from Mappings/: every canonical field × every dialect.",
        discussion: """
            Each cell is exact, converted, lossy or none, with the dialect inputs that set the field. \
            The folder is --mappings, else ./Mappings, else the Mappings folder of the checkout the tool was built in.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case markdown, json
    }

    @Option(help: "markdown (a table) or json.")
    var format: Format = .markdown

    @Option(help: "The folder holding <dialect>.json mapping files.")
    var mappings: String?

    @Option(help: "With --to: one pair's view (what a migration from this dialect carries), 100 columns wide.")
    var from: String?

    @Option(help: "With --from: the dialect migrated to.")
    var to: String?

    func validate() throws {
        if (from == nil) != (to == nil) { throw ValidationError("--from and --to go together") }
    }

    func run() throws {
        if let from, let to {
            try dialectOption(from, option: "--from")
            try dialectOption(to, option: "--to")
        }
        let directory = mappings ?? Self.defaultDirectory()
        let catalog = try rejectingBadInput(file: nil) { try MappingCatalog.load(from: directory) }
        if let from, let to {
            print(catalog.pairView(from: from, to: to), terminator: "")
            return
        }
        switch format {
        case .markdown: print(catalog.matrixMarkdown, terminator: "")
        case .json: print(JSONWriter.prettyText(catalog.matrixJSON))
        }
    }

    /// `./Mappings` when present, else the nearest `Mappings` above the executable (a build inside a checkout).
    static func defaultDirectory() -> String {
        let fm = FileManager.default
        if fm.fileExists(atPath: "Mappings/easemob-legacy.json") { return "Mappings" }
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while dir.path != "/" {
            let candidate = dir.appendingPathComponent("Mappings")
            if fm.fileExists(atPath: candidate.appendingPathComponent("easemob-legacy.json").path) { return candidate.path }
            dir = dir.deletingLastPathComponent()
        }
        return "Mappings"
    }
}
