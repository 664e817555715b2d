import Foundation

/// The documentation: the README (the front door) and the DocC catalogs in `Sources/`.
package enum Documentation {
    /// The `pushbridge` catalog: the articles, one per reader.
    package static let articles = Repository.root.appendingPathComponent("Sources/pushbridge/PushBridge.docc")

    /// The text of an article of the `pushbridge` catalog.
    /// - Parameter name: the article's file name without `.md`.
    package static func article(_ name: String) throws -> String {
        try String(contentsOf: articles.appendingPathComponent(name + ".md"), encoding: .utf8)
    }

    /// Every Markdown file of the documentation, relative to the repository root: the README and every
    /// catalog's pages.
    package static func markdownFiles() throws -> [String] {
        var files = ["README.md"]
        let sources = Repository.root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let folder = sources.appendingPathComponent(module)
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where entry.hasSuffix(".docc") {
                for page in try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent(entry).path).sorted()
                where page.hasSuffix(".md") {
                    files.append("Sources/\(module)/\(entry)/\(page)")
                }
            }
        }
        return files
    }

    /// The `$ command` lines between `<!-- example:MARKER:begin -->` and `…:end -->`, each with the lines it prints.
    package static func shellBlock(_ marker: String, in text: String) throws -> [(command: String, output: [String])] {
        guard let begin = text.range(of: "<!-- example:\(marker):begin -->"), let end = text.range(of: "<!-- example:\(marker):end -->") else {
            throw Missing(what: "the example:\(marker) markers")
        }
        var steps: [(String, [String])] = []
        for line in text[begin.upperBound..<end.lowerBound].split(separator: "\n") where !line.hasPrefix("```") {
            if line.hasPrefix("$ ") { steps.append((String(line.dropFirst(2)), [])) } else if !steps.isEmpty { steps[steps.count - 1].1.append(String(line)) }
        }
        return steps
    }

    package struct Missing: Error { var what: String }
}
