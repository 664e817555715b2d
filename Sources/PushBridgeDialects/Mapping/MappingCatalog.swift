import Foundation
import PushBridgeCore
import PushBridgeJSON

/// How well one dialect input carries its canonical fields (`Mappings/<dialect>.json`).
public enum Fidelity: String, Hashable, Sendable, CaseIterable, Comparable {
    /// The dialect has no input for the field.
    case none
    /// Only some values of the field can be written, or the input carries more than canonical keeps.
    case lossy
    /// Another unit or form; nothing lost either way.
    case converted
    /// The value unchanged.
    case exact

    public static func < (lhs: Fidelity, rhs: Fidelity) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// The field correspondence of every dialect, read from `Mappings/*.json`: the single source of
/// truth the adapters and the translator are checked against, and what `pushbridge mappings` prints.
public struct MappingCatalog: Sendable {
    /// One mapping entry: a dialect input and the canonical fields it sets (or reads, for queries).
    /// A `rest` entry is a field of the vendor's server REST (Specification §12), written as
    /// `METHOD /path field.path`; it names the SDK inputs it goes through (`via`).
    public struct Entry: Hashable, Sendable {
        public var input: String
        /// `call`, `query`, `message` or `rest`.
        public var kind: String
        /// For `rest` entries: the call and message inputs of the same dialect the REST field becomes.
        public var via: [String] = []
        public var canonical: [CanonicalField]
        public var fidelity: Fidelity
        public var seed: String
        public var note: String
    }

    /// One matrix cell: how a dialect expresses a canonical field, and through which inputs.
    public struct Cell: Hashable, Sendable {
        public var fidelity: Fidelity
        public var inputs: [String]

        /// The inputs as the matrix shows them: calls by name, message fields by path, each once.
        public var shownInputs: [String] {
            var out: [String] = []
            for input in inputs {
                let shown = input.hasPrefix("message.") ? String(input.dropFirst("message.".count)) : String(input.prefix { $0 != "." })
                if !out.contains(shown) { out.append(shown) }
            }
            return out
        }
    }

    /// Entries by dialect id, in the registry's order.
    public let dialects: [(id: String, entries: [Entry])]

    /// Reads the mapping documents.
    /// - Parameter documents: each dialect id with its `Mappings/<id>.json` bytes and file name.
    /// - Throws: `InputError` naming the file and pointer of a malformed entry.
    public init(documents: [(dialect: String, file: String, bytes: [UInt8])]) throws {
        dialects = try documents.map { dialect, file, bytes in
            do {
                let root = try FieldReader(try JSONParser.parse(bytes), at: .root, what: "a mapping document")
                let named = try root.string("dialect", expected: "the dialect id \"\(dialect)\"")
                guard named == dialect else {
                    throw InputError(.invalidValue, at: root.pointer / "dialect", expected: "\"\(dialect)\"", found: "\"\(named)\"")
                }
                let entries = try root.array("entries", expected: "an array of mapping entries").enumerated().map { i, value in
                    try Self.entry(FieldReader(value, at: root.pointer / "entries" / i, what: "a mapping entry"))
                }
                return (dialect, entries)
            } catch let error as InputError {
                throw error.in(file: file)
            }
        }
    }

    static func entry(_ r: FieldReader) throws -> Entry {
        try r.allowOnly(["input", "kind", "via", "canonical", "fidelity", "seed", "note"], context: "a mapping entry")
        let kind = try r.string("kind", expected: "\"call\", \"query\", \"message\" or \"rest\"")
        guard ["call", "query", "message", "rest"].contains(kind) else {
            throw InputError(.invalidValue, at: r.pointer / "kind", expected: "\"call\", \"query\", \"message\" or \"rest\"", found: "\"\(kind)\"")
        }
        let via = try r.optionalStringArray("via", expected: "the SDK inputs the REST field goes through") ?? []
        if !via.isEmpty && kind != "rest" { throw InputError(.unknownKey, at: r.pointer / "via", expected: "via only on rest entries") }
        let canonical = try r.stringArray("canonical", expected: "an array of canonical field ids").enumerated().map { i, id in
            guard let field = CanonicalField(rawValue: id) else {
                throw InputError(.unknownReference, at: r.pointer / "canonical" / i,
                    expected: "a canonical field: one of " + CanonicalField.allCases.map(\.rawValue).joined(separator: ", "), found: "\"\(id)\"")
            }
            return field
        }
        let fidelity = try r.word("fidelity", as: Fidelity.self)
        guard fidelity != Fidelity.none else {
            throw InputError(.invalidValue, at: r.pointer / "fidelity", expected: "exact, converted or lossy (none is the absence of an entry)")
        }
        return Entry(
            input: try r.string("input", expected: "the dialect input path", allowEmpty: false), kind: kind, via: via, canonical: canonical, fidelity: fidelity,
            seed: try r.string("seed", expected: "the seed the entry comes from", allowEmpty: false), note: try r.string("note", expected: "a note"))
    }

    /// Reads `<directory>/<dialect>.json` for every dialect of a registry.
    public static func load(from directory: String, registry: DialectRegistry = .standard) throws -> MappingCatalog {
        try MappingCatalog(
            documents: registry.ids.map { id in
                let file = directory + "/" + id + ".json"
                guard let data = FileManager.default.contents(atPath: file) else {
                    throw InputError(.unreadableFile, at: .root, expected: "the mapping file of \(id)", found: FileManager.default.fileExists(atPath: file) ? "a file that cannot be read" : "no such file", file: file)
                }
                return (id, file, [UInt8](data))
            })
    }

    /// The entries of one dialect.
    public func entries(_ dialect: String) -> [Entry] { dialects.first { $0.id == dialect }?.entries ?? [] }

    /// How a dialect expresses a canonical field: the weakest fidelity among its call and message entries.
    public func cell(_ field: CanonicalField, in dialect: String) -> Cell {
        let entries = entries(dialect).filter { ($0.kind == "call" || $0.kind == "message") && $0.canonical.contains(field) }
        guard let weakest = entries.map(\.fidelity).min() else { return Cell(fidelity: .none, inputs: []) }
        return Cell(fidelity: weakest, inputs: entries.map(\.input))
    }

    /// How the vendor's server REST sets a canonical field for a dialect: the weakest fidelity among its `rest` entries.
    public func restCell(_ field: CanonicalField, in dialect: String) -> Cell {
        let entries = entries(dialect).filter { $0.kind == "rest" && $0.canonical.contains(field) }
        guard let weakest = entries.map(\.fidelity).min() else { return Cell(fidelity: .none, inputs: []) }
        return Cell(fidelity: weakest, inputs: entries.map(\.input))
    }

    /// The dialects that have REST entries.
    var restDialects: [String] { dialects.filter { $0.entries.contains { $0.kind == "rest" } }.map(\.id) }

    /// The matrix as JSON: `{"dialects": [...], "fields": [{"field", "summary", "cells": {dialect: {"fidelity", "inputs"}}}]}`.
    public var matrixJSON: JSONValue {
        func json(_ cell: Cell) -> JSONValue {
            .object(JSONObject([("fidelity", .string(cell.fidelity.rawValue)), ("inputs", .array(cell.inputs.map(JSONValue.string)))]))
        }
        let fields: [JSONValue] = CanonicalField.allCases.map { field in
            var cells = JSONObject()
            for (id, _) in dialects { cells[id] = json(cell(field, in: id)) }
            var rest = JSONObject()
            for id in restDialects { rest[id] = json(restCell(field, in: id)) }
            return .object(
                JSONObject([("field", .string(field.rawValue)), ("summary", .string(field.summary)), ("cells", .object(cells)), ("rest", .object(rest))]))
        }
        return .object(JSONObject([("dialects", .array(dialects.map { .string($0.id) })), ("fields", .array(fields))]))
    }

    /// The matrix as a markdown table: every canonical field × every dialect, each dialect's SDK
    /// column followed by its server REST column.
    public var matrixMarkdown: String {
        let rest = Set(restDialects)
        let columns = dialects.flatMap { id, _ in rest.contains(id) ? [id, id + " REST"] : [id] }
        var lines = [
            "| canonical field | what it holds | " + columns.joined(separator: " | ") + " |",
            "|---|---|" + String(repeating: "---|", count: columns.count),
        ]
        func text(_ cell: Cell, fields: Bool) -> String {
            if cell.fidelity == .none { return "none" }
            // REST inputs: the field names (the route is in Mappings/ and in the article "Drop-in for vendor REST").
            let shown = fields ? cell.inputs.map { String($0.split(separator: " ").last ?? "") }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } } : cell.shownInputs
            return "\(cell.fidelity.rawValue): " + shown.map { "`\($0)`" }.joined(separator: ", ")
        }
        for field in CanonicalField.allCases {
            let cells = dialects.flatMap { id, _ -> [String] in
                rest.contains(id) ? [text(cell(field, in: id), fields: false), text(restCell(field, in: id), fields: true)] : [text(cell(field, in: id), fields: false)]
            }
            lines.append("| `\(field.rawValue)` | \(field.summary) | " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append("`user.presence` and `user.badge` are also set by the scenario in every dialect (`receiver.presence`, `receiver.badge`).")
        return lines.joined(separator: "\n") + "\n"
    }
}
