import Foundation
import Testing

/// The README's facade examples are real: the Swift snippet is this target's `ReadmeSnippet.swift`
/// (so it compiles), and the shell block runs verbatim with the files it names.
@Suite("README examples")
struct ReadmeExampleTests {
    static let readme = Result { try String(contentsOf: Repository.root.appendingPathComponent("README.md"), encoding: .utf8) }
    static let folder = Repository.root.appendingPathComponent("Examples/facade").path

    /// A copy of Examples/facade in a fresh folder (the examples write push.db next to their files).
    static func copyOfExamples() throws -> String {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("pushbridge-readme-\(UUID().uuidString)").path
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        return copy
    }

    /// The README's shell block: each `$ command` with the lines it prints.
    static func shellBlock() throws -> [(command: String, output: [String])] {
        let text = try readme.get()
        guard let begin = text.range(of: "<!-- example:facade:begin -->"), let end = text.range(of: "<!-- example:facade:end -->") else {
            throw ReadmeError.missing("the example:facade markers")
        }
        var steps: [(String, [String])] = []
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n") where !line.hasPrefix("```") {
            if line.hasPrefix("$ ") { steps.append((String(line.dropFirst(2)), [])) } else if !steps.isEmpty { steps[steps.count - 1].1.append(String(line)) }
        }
        return steps
    }

    enum ReadmeError: Error { case missing(String) }

    @Test func theSwiftSnippetIsTheCompiledFile() throws {
        let file = try String(contentsOf: Repository.root.appendingPathComponent("Tests/PushBridgeTests/ReadmeSnippet.swift"), encoding: .utf8)
        #expect(try Self.readme.get().contains("```swift\n" + file + "```\n"), "README's facade snippet differs from ReadmeSnippet.swift")
    }

    @Test func theShellBlockRunsVerbatim() throws {
        let steps = try Self.shellBlock()
        #expect(steps.count == 8)
        #expect(steps.first?.command == "cd Examples/facade")
        let copy = try Self.copyOfExamples()
        for (command, output) in steps.dropFirst() {
            let words = command.split(separator: " ").map(String.init)
            #expect(words.first == "pushbridge", "\(command)")
            let run = try runTool(Array(words.dropFirst()), in: copy)
            #expect(run.status == 0, "\(command): \(run.stderr)")
            #expect(run.stdout.split(separator: "\n").map(String.init) == output, "\(command)")
        }
    }

    @Test func theLibrarySnippetDecidesWhatTheCommandLinePrints() throws {
        let copy = try Self.copyOfExamples()
        let decisions = try sendTheFacadeExample(folder: copy, database: copy + "/library.db")
        let sendOutput = try #require(try Self.shellBlock().first { $0.command.contains(" send ") }).output
        #expect(decisions.map { String(decoding: $0.json, as: UTF8.self) } == sendOutput)
    }
}
