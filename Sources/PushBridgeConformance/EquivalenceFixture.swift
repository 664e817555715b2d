import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

/// One intent written in several dialects (Specification §6, `Fixtures/equivalence/`): every variant,
/// rendered with every profile in `expect`, must give that profile's decision, and all variants
/// must reach equal canonical state.
public struct EquivalenceFixture: Sendable {
    /// One dialect's version of the intent, as an ordinary scenario.
    public struct Variant: Sendable {
        public let dialect: String
        public let fixture: Fixture
    }

    /// The decision expected when rendering with one profile.
    public struct Expectation: Sendable {
        public let profile: Profile
        public let decision: JSONObject
    }

    public let path: String
    /// The whole document as read.
    public let document: JSONValue
    public let name: String
    public internal(set) var variants: [Variant]
    public internal(set) var expectations: [Expectation]

    static let topLevelKeys = ["name", "description", "seeds", "now", "app", "variants", "expect"]
    static let sharedKeys = ["name", "description", "seeds", "now", "app"]

    /// An error from a variant's scenario, pointed into this file: errors inside `sender`,
    /// `receiver` or `message` are under `/variants/<dialect>`; the shared keys are at the top.
    public static func locate(_ error: InputError, inVariant dialect: String) -> InputError {
        let first = error.pointer.tokens.first ?? ""
        let own = ["sender", "receiver", "message", "dialect"].contains(first) || error.pointer.tokens.isEmpty
        guard own else { return error }
        let tokens = first == "dialect" ? [] : error.pointer.tokens
        var located = error
        located.pointer = JSONPointer(tokens: ["variants", dialect] + tokens)
        return located
    }

    /// Whether a document is an equivalence fixture (it has `variants`) rather than a scenario.
    public static func isEquivalence(_ document: JSONValue) -> Bool { document["variants"] != nil }

    /// Reads an equivalence fixture.
    /// - Parameters:
    ///   - path: the file, for error messages and reports.
    ///   - document: its parsed JSON.
    ///   - registry: the dialects and profiles.
    /// - Throws: `InputError` naming the file and the pointer (inside a variant: `/variants/<dialect>/…`).
    public init(path: String, document: JSONValue, registry: DialectRegistry = .standard) throws {
        self.path = path
        self.document = document
        do {
            let root = try FieldReader(document, at: .root, what: "an equivalence fixture object")
            try root.allowOnly(Self.topLevelKeys, context: "an equivalence fixture")
            name = try root.string("name", expected: "the fixture's name as a string", allowEmpty: false)
            let variantsReader = try root.object("variants", expected: "the variants {dialect: {\"sender\", \"receiver\", \"message\"}}")
            guard variantsReader.object.count >= 2 else {
                throw InputError(.invalidValue, at: variantsReader.pointer, expected: "at least two dialect variants",
                    found: "\(variantsReader.object.count)")
            }
            var variants: [Variant] = []
            for (dialect, value) in variantsReader.object {
                let pointer = variantsReader.pointer / dialect
                _ = try registry.adapter(dialect, at: pointer)
                let v = try FieldReader(value, at: pointer, what: "a variant {\"sender\", \"receiver\", \"message\"}")
                try v.allowOnly(["sender", "receiver", "message"], context: "a variant")
                var scenario = JSONObject()
                for key in Self.sharedKeys { if let shared = root.value(key) { scenario[key] = shared } }
                scenario["name"] = .string(name + " [" + dialect + "]")
                scenario["dialect"] = .string(dialect)
                for key in ["sender", "receiver", "message"] { if let part = v.value(key) { scenario[key] = part } }
                do {
                    variants.append(Variant(dialect: dialect, fixture: try Fixture(path: path, document: .object(scenario))))
                } catch let error as InputError {
                    throw Self.locate(error, inVariant: dialect)
                }
            }
            self.variants = variants
            guard root.has("expect") else {  // judged as "no expectation"; `conform --record` writes one
                expectations = []
                return
            }
            let expectReader = try root.object("expect", expected: "the expected decision per profile {profile: {\"push\", …}}")
            guard !expectReader.object.isEmpty else {
                throw InputError(.missingKey, at: expectReader.pointer, expected: "an expected decision for at least one profile")
            }
            expectations = try expectReader.object.map { id, value in
                let pointer = expectReader.pointer / id
                let profile = try registry.profile(id, at: pointer)
                try Scenario.validateExpectation(value, at: pointer)
                guard var decision = value.objectValue, !decision.isEmpty else {
                    throw InputError(.invalidValue, at: pointer, expected: "an expected decision {\"push\", …}", found: value.briefDescription)
                }
                if decision.contains("queries") {
                    throw InputError(.unknownKey, at: pointer / "queries", expected: "queries only in dialect fixtures (a variant's state is compared instead)")
                }
                decision["queries"] = nil
                return Expectation(profile: profile, decision: decision)
            }
        } catch let error as InputError {
            throw error.in(file: path)
        }
    }
}
