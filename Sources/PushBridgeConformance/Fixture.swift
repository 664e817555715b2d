import PushBridgeDialects
import PushBridgeJSON

/// One fixture file: its path, its strict-parsed document and the scenario in it.
public struct Fixture: Sendable {
    public let path: String
    public let document: JSONValue
    public let scenario: Scenario

    /// Loads and validates a fixture file.
    /// - Throws: `InputError` naming the file, the JSON pointer and what was expected.
    public init(path: String) throws {
        self.path = path
        let bytes = try FixtureDiscovery.read(path)
        do {
            document = try JSONParser.parse(bytes)
            scenario = try Scenario(document)
        } catch let error as InputError {
            throw error.in(file: path)
        }
    }

    /// Builds a fixture from an in-memory document (for libraries generating fixtures).
    /// - Parameters:
    ///   - path: the file name to report.
    ///   - document: the scenario document.
    public init(path: String, document: JSONValue) throws {
        self.path = path
        self.document = document
        do {
            scenario = try Scenario(document)
        } catch let error as InputError {
            throw error.in(file: path)
        }
    }

    /// The expected decision keys (`push`, `payload`, `deliveries`, `reason`), without `queries`.
    public var expectedDecision: JSONObject? {
        guard var object = scenario.expect?.objectValue else { return nil }
        object["queries"] = nil
        return object
    }

    /// The expected query results, with their pointers.
    public var expectedQueries: [(query: JSONValue, result: JSONValue, pointer: JSONPointer)] {
        guard let queries = scenario.expect?["queries"]?.arrayValue else { return [] }
        return queries.enumerated().compactMap { index, query in
            guard let result = query["result"] else { return nil }
            return (query, result, JSONPointer.root / "expect" / "queries" / index)
        }
    }
}
