import Foundation
import PushBridgeTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The documentation's examples are real: the facade's Swift snippet is this target's
/// `FacadeSnippet.swift` (so it compiles), and the README's tour and the facade article's shell block run
/// verbatim with the files they name.
@Suite("Documentation examples")
struct DocumentationExampleTests {
    static let facade = Result { try Documentation.article("UsingTheFacade") }
    static let folder = Repository.root.appendingPathComponent("Examples/facade").path

    /// A copy of Examples/facade in a fresh folder (the examples write push.db next to their files).
    static func copyOfExamples() throws -> String {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-docs-\(UUID().uuidString)").path
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        return copy
    }

    @Test func theSwiftSnippetIsTheCompiledFile() throws {
        let file = try String(contentsOf: Repository.root.appendingPathComponent("Tests/pushbridgeTests/FacadeSnippet.swift"), encoding: .utf8)
        #expect(try Self.facade.get().contains("```swift\n" + file + "```\n"), "UsingTheFacade.md's snippet differs from FacadeSnippet.swift")
    }

    @Test func theShellBlockRunsVerbatim() throws {
        let steps = try Documentation.shellBlock("facade", in: Self.facade.get())
        #expect(steps.count == 8)
        #expect(steps.first?.command == "cd Examples/facade")
        try Self.expectRunsVerbatim(steps.dropFirst(), in: try Self.copyOfExamples())
    }

    @Test func theLibrarySnippetDecidesWhatTheCommandLinePrints() async throws {
        let copy = try Self.copyOfExamples()
        let decisions = try await sendTheFacadeExample(folder: copy, database: copy + "/library.db")
        let sendOutput = try #require(try Documentation.shellBlock("facade", in: Self.facade.get()).first { $0.command.contains(" send ") }).output
        #expect(decisions.map { String(decoding: $0.json, as: UTF8.self) } == sendOutput)
    }

    /// The README's five-minute tour runs as shown, from the repository root.
    @Test func theReadmeTourRunsVerbatim() throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let steps = try Documentation.shellBlock("tour", in: readme)
        #expect(steps.count == 3)
        try Self.expectRunsVerbatim(steps[...], in: nil)
    }

    /// Runs each `pushbridge …` step and expects it to succeed and print exactly the lines shown.
    /// - Parameters:
    ///   - steps: the commands with the lines each prints.
    ///   - folder: where they run (`nil`: the repository root).
    static func expectRunsVerbatim(_ steps: ArraySlice<(command: String, output: [String])>, in folder: String?) throws {
        for (command, output) in steps {
            let words = command.split(separator: " ").map(String.init)
            #expect(words.first == "pushbridge", "\(command)")
            let run = try runTool(Array(words.dropFirst()), in: folder)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(run.stdout.split(separator: "\n").map(String.init) == output, "\(command)")
        }
    }
}

/// What the documentation names exists: every relative link, every `Fixtures/…`, `Examples/…` or
/// `Sources/…` path, and every `<doc:…>` article; the README stays a front door.
@Suite("Documentation links")
struct DocumentationLinkTests {
    /// The paths a page names: relative link targets, and code spans that start with a top-level folder.
    static func namedPaths(in text: String) -> [String] {
        var paths: [String] = []
        let link = /\]\(([^)#\s]+)(#[^)]*)?\)/
        for match in text.matches(of: link) {
            let target = String(match.output.1)
            // A file's link has a dot or a slash; `[UInt8](repeating:count:)` is Swift, not a link.
            if target.contains("://") || target.hasPrefix("mailto:") || !target.contains(where: { $0 == "." || $0 == "/" }) { continue }
            paths.append(target)
        }
        let span = /`((?:Fixtures|Examples|Mappings|Sources|Tests)\/[^`\s*…{}<>]+)`/
        for match in text.matches(of: span) { paths.append(String(match.output.1)) }
        return paths
    }

    @Test(arguments: try! Documentation.markdownFiles())
    func everyNamedPathExists(page: String) throws {
        let text = try String(contentsOf: Repository.root.appendingPathComponent(page), encoding: .utf8)
        let folder = (page as NSString).deletingLastPathComponent
        for path in Self.namedPaths(in: text) {
            // A link is relative to its page; a code span names a path from the repository root.
            let fromPage = Repository.root.appendingPathComponent(folder).appendingPathComponent(path).path
            let fromRoot = Repository.root.appendingPathComponent(path).path
            let exists = FileManager.default.fileExists(atPath: fromPage) || FileManager.default.fileExists(atPath: fromRoot)
            #expect(exists, "\(page) names \(path), which does not exist")
        }
    }

    @Test(arguments: try! Documentation.markdownFiles())
    func everyArticleLinkResolves(page: String) throws {
        let text = try String(contentsOf: Repository.root.appendingPathComponent(page), encoding: .utf8)
        let folder = Repository.root.appendingPathComponent((page as NSString).deletingLastPathComponent)
        for match in text.matches(of: /<doc:([A-Za-z0-9_-]+)(#[^>]*)?>/) {
            let article = folder.appendingPathComponent(String(match.output.1) + ".md").path
            #expect(FileManager.default.fileExists(atPath: article), "\(page) links <doc:\(match.output.1)>, which is not an article of its catalog")
        }
    }

    @Test func theCheckFindsAMissingPath() {
        #expect(Self.namedPaths(in: "see [x](Nowhere/file.md) and `Fixtures/none.json`, not [y](https://example.com)")
            == ["Nowhere/file.md", "Fixtures/none.json"])
    }

    @Test func theReadmeIsAFrontDoor() throws {
        let readme = try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = readme.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= 300, "README.md has \(lines) lines: what a reader needs beyond the front door belongs in an article")
        for section in ["## Set-up", "## A five-minute tour", "## Documentation", "## The modules"] {
            #expect(readme.contains("\n" + section + "\n"), "README.md has no \(section)")
        }
    }

    /// Every module a product is built from has a catalog whose landing page says where to start reading.
    @Test func everyLibraryHasACatalog() throws {
        let sources = Repository.root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) where module.hasPrefix("PushBridge") && module != "PushBridgeBench" {
            let page = sources.appendingPathComponent("\(module)/\(module).docc/\(module).md").path
            let text = try? String(contentsOfFile: page, encoding: .utf8)
            #expect(text?.hasPrefix("# ``\(module)``\n") == true, "\(module) has no catalog landing page at \(page)")
            #expect(text?.contains("**Where to start reading.**") == true, "\(module)'s landing page does not say where to start reading")
        }
    }
}
