/// A JSON value that keeps the distinctions a strict comparison needs.
///
/// `1`, `1.0`, `true` and `"1"` are four different values: integers and numbers with a
/// fraction or exponent are separate cases. Objects keep the order their keys were read
/// or inserted in (for deterministic output) but compare without regard to key order.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    /// A number written without fraction or exponent that fits in 64 signed bits.
    case int(Int64)
    /// A number written with a fraction or an exponent.
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The JSON type name used in error messages and diffs: `null`, `boolean`, `integer`,
    /// `number`, `string`, `array` or `object`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var intValue: Int64? {
        if case .int(let i) = self { return i }
        return nil
    }

    /// Member lookup on an object; `nil` for other values or a missing key.
    public subscript(key: String) -> JSONValue? {
        objectValue?[key]
    }

    /// The value as compact JSON text (deterministic, no spaces).
    public var compactText: String {
        var writer = JSONWriter()
        writer.write(self)
        return writer.string
    }
}

/// An ordered JSON object whose equality ignores key order.
public struct JSONObject: Hashable, Sendable, Sequence {
    public internal(set) var entries: [(key: String, value: JSONValue)]

    public init() { entries = [] }

    public init(_ entries: [(key: String, value: JSONValue)]) {
        self.entries = []
        self.entries.reserveCapacity(entries.count)
        for (key, value) in entries { self[key] = value }
    }

    public var count: Int { entries.count }
    public var isEmpty: Bool { entries.isEmpty }
    public var keys: [String] { entries.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        get {
            for entry in entries where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key, newValue))
            }
        }
    }

    public func contains(_ key: String) -> Bool { entries.contains { $0.key == key } }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        entries.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for (key, value) in lhs.entries {
            guard let other = rhs[key], other == value else { return false }
        }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-independent: combine per-entry hashes commutatively.
        var combined = 0
        for (key, value) in entries {
            var h = Hasher()
            h.combine(key)
            h.combine(value)
            combined ^= h.finalize()
        }
        hasher.combine(entries.count)
        hasher.combine(combined)
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
    public init(nilLiteral: ()) { self = .null }
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONObject {
    mutating func appendUnique(contentsOf more: [(key: String, value: JSONValue)]) {
        entries.append(contentsOf: more)
    }
}
