import CJSONC
import PushBridgeJSON

/// One difference between an expected and an actual JSON document.
public struct JSONDifference: Hashable, Sendable, CustomStringConvertible {
    /// A value as it appears in a diff: compact JSON text and its JSON type.
    public struct Side: Hashable, Sendable, CustomStringConvertible {
        public let text: String
        public let type: String
        public init(text: String, type: String) {
            self.text = text
            self.type = type
        }
        public var description: String { "\(text) (\(type))" }
    }

    /// Where the documents differ.
    public let pointer: JSONPointer
    /// The expected value there; `nil` when the expected document has nothing there.
    public let expected: Side?
    /// The actual value there; `nil` when the actual document has nothing there.
    public let got: Side?

    public init(pointer: JSONPointer, expected: Side?, got: Side?) {
        self.pointer = pointer
        self.expected = expected
        self.got = got
    }

    /// `/aps/badge: expected 1 (integer), got true (boolean)`. Values longer than
    /// ``shownCharacters`` are shortened around the first character where they differ.
    public var description: String {
        var e = expected?.text
        var g = got?.text
        if let a = e, let b = g, max(a.count, b.count) > Self.shownCharacters {
            (e, g) = Self.shortened(a, b)
        } else {
            e = e.map { Self.clip($0) }
            g = g.map { Self.clip($0) }
        }
        let expectedText = expected.map { "\(e!) (\($0.type))" } ?? "nothing"
        let gotText = got.map { "\(g!) (\($0.type))" } ?? "nothing"
        return "\(pointer): expected \(expectedText), got \(gotText)"
    }

    /// How many characters of a value a diff line shows.
    public static let shownCharacters = 80

    static func clip(_ text: String) -> String {
        text.count > shownCharacters ? String(text.prefix(shownCharacters - 1)) + "…" : text
    }

    /// Both texts cut to a window that starts a little before their first difference.
    static func shortened(_ a: String, _ b: String) -> (String, String) {
        let x = Array(a)
        let y = Array(b)
        var first = 0
        while first < x.count, first < y.count, x[first] == y[first] { first += 1 }
        let start = max(0, first - 20)
        func window(_ c: [Character]) -> String {
            let end = min(c.count, start + shownCharacters - 2)
            return (start > 0 ? "…" : "") + String(c[min(start, c.count)..<end]) + (end < c.count ? "…" : "")
        }
        return (window(x), window(y))
    }
}

/// Strict, typed JSON comparison on top of libjson-c.
///
/// Both documents first pass the strict parser (json-c alone accepts duplicate keys, `NaN`,
/// `Infinity`, single-quoted keys and saturates integers past 2^64); then json-c parses them and
/// `json_object_equal` decides. `1`, `1.0`, `true` and `"1"` all differ; key order does not matter;
/// array order does.
public enum StrictComparison {
    /// Which document a comparison rejected as malformed.
    public struct MalformedDocument: Error, Sendable, CustomStringConvertible {
        public enum Role: String, Sendable { case expected, got }
        public let role: Role
        public let error: InputError
        public init(role: Role, error: InputError) {
            self.role = role
            self.error = error
        }
        public var description: String { "\(role.rawValue) document is not strict JSON: \(error)" }
    }

    /// Whether two documents are equal under strict, typed comparison.
    /// - Parameters:
    ///   - expected: the expected document (UTF-8 JSON).
    ///   - got: the actual document (UTF-8 JSON).
    /// - Throws: ``MalformedDocument`` when either side is not strict JSON.
    public static func equal(expected: [UInt8], got: [UInt8]) throws -> Bool {
        let e = try JSONCDocument(validating: expected, role: .expected)
        let g = try JSONCDocument(validating: got, role: .got)
        return json_object_equal(e.root, g.root) == 1
    }

    /// Every difference between two documents, as JSON pointer + expected + got, each with its type.
    /// - Parameters:
    ///   - expected: the expected document.
    ///   - got: the actual document.
    ///   - limit: stop after this many differences.
    /// - Throws: ``MalformedDocument`` when either side is not strict JSON.
    public static func differences(expected: [UInt8], got: [UInt8], limit: Int = 100) throws -> [JSONDifference] {
        let e = try JSONCDocument(validating: expected, role: .expected)
        let g = try JSONCDocument(validating: got, role: .got)
        if json_object_equal(e.root, g.root) == 1 { return [] }
        var out: [JSONDifference] = []
        collect(e.root, g.root, at: .root, into: &out, limit: limit)
        return out
    }

    /// Every difference between an expected value and an actual document.
    public static func differences(expected: JSONValue, got: [UInt8], limit: Int = 100) throws -> [JSONDifference] {
        var writer = JSONWriter()
        writer.write(expected)
        return try differences(expected: writer.bytes, got: got, limit: limit)
    }

    static func side(_ object: OpaquePointer?) -> JSONDifference.Side {
        JSONDifference.Side(text: text(object), type: typeName(object))
    }

    static func typeName(_ object: OpaquePointer?) -> String {
        guard let object else { return "null" }
        switch json_object_get_type(object) {
        case json_type_null: return "null"
        case json_type_boolean: return "boolean"
        case json_type_int: return "integer"
        case json_type_double: return "number"
        case json_type_string: return "string"
        case json_type_array: return "array"
        case json_type_object: return "object"
        default: return "unknown"
        }
    }

    static func text(_ object: OpaquePointer?) -> String {
        guard let object else { return "null" }
        guard let c = json_object_to_json_string_ext(object, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) else {
            return "?"
        }
        return String(cString: c)
    }

    static func collect(_ e: OpaquePointer?, _ g: OpaquePointer?, at pointer: JSONPointer, into out: inout [JSONDifference], limit: Int) {
        guard out.count < limit else { return }
        let te = typeName(e)
        let tg = typeName(g)
        if te != tg {
            out.append(JSONDifference(pointer: pointer, expected: side(e), got: side(g)))
            return
        }
        if te == "object", let e, let g {
            var it = json_object_iter_begin(e)
            var end = json_object_iter_end(e)
            while json_object_iter_equal(&it, &end) == 0 {
                let name = String(cString: json_object_iter_peek_name(&it))
                let ev = json_object_iter_peek_value(&it)
                var gv: OpaquePointer? = nil
                if json_object_object_get_ex(g, name, &gv) != 0 {
                    if json_object_equal(ev, gv) != 1 {
                        collect(ev, gv, at: pointer / name, into: &out, limit: limit)
                    }
                } else {
                    out.append(JSONDifference(pointer: pointer / name, expected: side(ev), got: nil))
                }
                if out.count >= limit { return }
                json_object_iter_next(&it)
            }
            var git = json_object_iter_begin(g)
            var gend = json_object_iter_end(g)
            while json_object_iter_equal(&git, &gend) == 0 {
                let name = String(cString: json_object_iter_peek_name(&git))
                var ev: OpaquePointer? = nil
                if json_object_object_get_ex(e, name, &ev) == 0 {
                    out.append(JSONDifference(pointer: pointer / name, expected: nil, got: side(json_object_iter_peek_value(&git))))
                    if out.count >= limit { return }
                }
                json_object_iter_next(&git)
            }
            return
        }
        if te == "array", let e, let g {
            let ne = json_object_array_length(e)
            let ng = json_object_array_length(g)
            for i in 0..<min(ne, ng) {
                let ev = json_object_array_get_idx(e, i)
                let gv = json_object_array_get_idx(g, i)
                if json_object_equal(ev, gv) != 1 { collect(ev, gv, at: pointer / i, into: &out, limit: limit) }
                if out.count >= limit { return }
            }
            if ne > ng {
                for i in ng..<ne {
                    out.append(JSONDifference(pointer: pointer / i, expected: side(json_object_array_get_idx(e, i)), got: nil))
                    if out.count >= limit { return }
                }
            } else if ng > ne {
                for i in ne..<ng {
                    out.append(JSONDifference(pointer: pointer / i, expected: nil, got: side(json_object_array_get_idx(g, i))))
                    if out.count >= limit { return }
                }
            }
            return
        }
        if json_object_equal(e, g) != 1 {
            out.append(JSONDifference(pointer: pointer, expected: side(e), got: side(g)))
        }
    }
}

/// A json-c document that owns its root object.
final class JSONCDocument {
    let root: OpaquePointer?

    init(validating bytes: [UInt8], role: StrictComparison.MalformedDocument.Role) throws {
        do {
            try JSONParser.validate(bytes)
        } catch let error as InputError {
            throw StrictComparison.MalformedDocument(role: role, error: error)
        }
        guard let tokener = json_tokener_new_ex(Int32(JSONParser.maximumDepth + 1)) else {
            throw StrictComparison.MalformedDocument(
                role: role, error: InputError(.malformedJSON, at: .root, expected: "memory for the json-c tokener"))
        }
        defer { json_tokener_free(tokener) }
        json_tokener_set_flags(tokener, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8)
        var withNul = bytes
        withNul.append(0)  // json-c needs the terminator to finish a top-level scalar
        let parsed = withNul.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { json_tokener_parse_ex(tokener, $0.baseAddress, Int32($0.count)) }
        }
        let status = json_tokener_get_error(tokener)
        guard status == json_tokener_success else {
            if let parsed { json_object_put(parsed) }
            let reason = String(cString: json_tokener_error_desc(status))
            throw StrictComparison.MalformedDocument(
                role: role, error: InputError(.malformedJSON, at: .root, expected: "JSON json-c accepts", found: reason))
        }
        root = parsed
    }

    deinit {
        if let root { json_object_put(root) }
    }
}
