import ArgumentParser
import Foundation
import PushBridgeConformance
import PushBridgeServiceConformance
import PushBridgeFacadeConformance
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import Synchronization

struct Translate: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite a scenario in another dialect and list what cannot be carried over.",
        discussion: """
            Prints the scenario in the target dialect with "translatedFrom", the source's profile and \
            "losses": [{"field", "user"?, "key"?, "why"}]. The translated scenario can be decided as it is; \
            when nothing is lost it decides exactly as the source and keeps its "expect". \
            With --strict, exit 3 when anything is lost (the scenario is still printed).
            """)

    @Argument(help: "A scenario file, or several files and folders (searched recursively for *.json) with --output.")
    var paths: [String]

    @Option(help: "The target dialect: easemob-legacy, agora-silent or tencent-tim.")
    var to: String

    @Option(help: "For several files or a folder: the folder each translation is written to, under its relative path.")
    var output: String?

    @Flag(help: "Exit 3 when anything is lost.")
    var strict = false

    func run() throws {
        let registry = DialectRegistry.standard
        try dialectOption(to, option: "--to", in: registry)
        let files = try rejectingBadInput(file: nil) { try FixtureDiscovery.files(in: paths).map { ($0, Self.relative($0, in: paths)) } }
        if output == nil, paths.count == 1, files.count == 1, files[0].0 == paths[0] {
            let translation = try rejectingBadInput(file: paths[0]) {
                try ScenarioTranslator().translate(try Fixture(path: paths[0]).scenario, to: to)
            }
            print(JSONWriter.prettyText(translation.document))
            for loss in translation.losses { printError("lost: " + loss.description) }
            if strict && !translation.isLossless { throw ExitCode(3) }
            return
        }
        guard let output else {
            printError("pushbridge: --output: expected the folder to write translations to, for \(files.count) files [missing-key]")
            throw ExitCode(2)
        }
        if files.isEmpty {
            printError("pushbridge: no scenarios to translate: no *.json file under " + paths.map { "\"\($0)\"" }.joined(separator: ", ") + " [no-fixtures]")
            throw ExitCode(2)
        }
        var lossless = 0, lossy = 0, skipped = 0, bad = 0
        var byField: [String: Int] = [:]
        for (file, relative) in files {
            do {
                let document = try JSONParser.parse(try FixtureDiscovery.read(file))
                if document["variants"] != nil {
                    skipped += 1
                    print("SKIP      \(file)  (an equivalence fixture: already in several dialects)")
                    continue
                }
                let translation = try ScenarioTranslator().translate(try Fixture(path: file, document: document).scenario, to: to)
                let destination = URL(fileURLWithPath: output).appendingPathComponent(relative)
                try FileManager.default.createDirectory(at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
                guard FileManager.default.createFile(atPath: destination.path, contents: Data((JSONWriter.prettyText(translation.document) + "\n").utf8)) else {
                    printError("pushbridge: --output: expected a writable folder, found \"\(output)\" [unreadable-file]")
                    throw ExitCode(2)
                }
                let fields = Set(translation.losses.map(\.field.rawValue)).sorted()
                for field in fields { byField[field, default: 0] += 1 }
                if translation.isLossless {
                    lossless += 1
                    print("LOSSLESS  \(file) → \(destination.path)")
                } else {
                    lossy += 1
                    print("LOSSY     \(file) → \(destination.path)  (\(translation.losses.count) lost: \(fields.joined(separator: ", ")))")
                }
            } catch let error as InputError {
                bad += 1
                print("BAD       \(file)")
                printError("pushbridge: " + error.in(file: file).description)
            }
        }
        if !byField.isEmpty {
            print("")
            print("Losses by field:")
            let width = String(byField.values.max() ?? 0).count
            for (field, count) in byField.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
                print("  " + String(repeating: " ", count: width - String(count).count) + "\(count) file\(count == 1 ? ": " : "s:") \(field)")
            }
        }
        print("\(lossless + lossy) translated to \(to) (\(lossless) lossless, \(lossy) lossy), \(skipped) skipped, \(bad) bad")
        if bad > 0 { throw ExitCode(2) }
        if strict && lossy > 0 { throw ExitCode(3) }
    }

    /// A file's path below the folder argument that found it (its name, for a file argument).
    static func relative(_ file: String, in paths: [String]) -> String {
        for path in paths where file != path {
            let folder = path.hasSuffix("/") ? path : path + "/"
            if file.hasPrefix(folder) { return String(file.dropFirst(folder.count)) }
        }
        return URL(fileURLWithPath: file).lastPathComponent
    }
}
