import PushBridgeConformance
import PushBridgeDialects
import PushBridgeJSON
import Testing

/// `Mappings/<dialect>.json` lists every input the adapter accepts, and nothing it does not.
@Suite("Mappings")
struct MappingTests {
    static let fidelities: Set<String> = ["exact", "converted", "lossy"]

    static func entries(_ dialect: String) throws -> [JSONValue] {
        let document = try JSONParser.parse(PushBridgeConformanceFile.read("\(Repository.mappings)/\(dialect).json"))
        #expect(document["dialect"] == .string(dialect))
        return document["entries"]?.arrayValue ?? []
    }

    @Test("every accepted input has a mapping entry, every entry an accepted input", arguments: DialectRegistry.standard.ids)
    func mappingMatchesAdapter(_ dialect: String) throws {
        let adapter = try #require(DialectRegistry.standard.adapter(dialect))
        let entries = try Self.entries(dialect)
        let inputs = entries.compactMap { $0["input"]?.stringValue }
        #expect(Set(inputs).count == inputs.count, "duplicate inputs")
        for call in adapter.settingCalls + adapter.queryCalls {
            #expect(inputs.contains { $0 == call || $0.hasPrefix(call + ".") }, "call \(call) has no mapping entry")
        }
        for field in adapter.messageFields {
            #expect(inputs.contains("message." + field), "message field \(field) has no mapping entry")
        }
        for entry in entries {
            let input = entry["input"]?.stringValue ?? ""
            if input.hasPrefix("message.") {
                #expect(adapter.messageFields.contains(String(input.dropFirst("message.".count))), "\(input) is not an accepted field")
            } else {
                let call = String(input.prefix { $0 != "." })
                #expect((adapter.settingCalls + adapter.queryCalls).contains(call), "\(input) names no call of \(dialect)")
            }
            #expect(Self.fidelities.contains(entry["fidelity"]?.stringValue ?? ""), "\(input): fidelity")
            #expect(entry["canonical"]?.stringValue?.isEmpty == false, "\(input): canonical")
            #expect(entry["seed"]?.stringValue?.isEmpty == false, "\(input): seed")
        }
    }
}

enum PushBridgeConformanceFile {
    static func read(_ path: String) throws -> [UInt8] {
        try PushBridgeConformance.FixtureDiscovery.read(path)
    }
}
