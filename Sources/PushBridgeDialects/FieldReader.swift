import PushBridgeCore
import PushBridgeJSON

/// Reads the members of one JSON object with types, ranges and pointers in every error.
public struct FieldReader: Sendable {
    public let object: JSONObject
    public let pointer: JSONPointer

    /// Wraps a value that must be an object.
    /// - Parameters:
    ///   - value: the value.
    ///   - pointer: where it is.
    ///   - what: what the object is, for the error ("a call object").
    public init(_ value: JSONValue, at pointer: JSONPointer, what: String = "an object") throws {
        guard case .object(let object) = value else {
            throw InputError(.wrongType, at: pointer, expected: what, found: value.briefDescription)
        }
        self.object = object
        self.pointer = pointer
    }

    public func has(_ key: String) -> Bool { object.contains(key) }

    /// Rejects any key outside `allowed`.
    public func allowOnly(_ allowed: [String], context: String? = nil) throws {
        for key in object.keys where !allowed.contains(key) {
            let list = allowed.map { "\"\($0)\"" }.joined(separator: ", ")
            throw InputError(.unknownKey, at: pointer / key, expected: "one of the keys \(list)\(context.map { " of \($0)" } ?? "")",
                found: "unknown key \"\(key)\"")
        }
    }

    public func value(_ key: String) -> JSONValue? { object[key] }

    func missing(_ key: String, _ expected: String) -> InputError {
        InputError(.missingKey, at: pointer / key, expected: expected, found: "nothing (the key is missing)")
    }

    func wrongType(_ key: String, _ value: JSONValue, _ expected: String) -> InputError {
        InputError(.wrongType, at: pointer / key, expected: expected, found: value.briefDescription)
    }

    public func string(_ key: String, expected: String = "a string", allowEmpty: Bool = true) throws -> String {
        guard let value = object[key] else { throw missing(key, expected) }
        guard case .string(let s) = value else { throw wrongType(key, value, expected) }
        if !allowEmpty && s.isEmpty { throw InputError(.invalidValue, at: pointer / key, expected: expected, found: "an empty string") }
        return s
    }

    public func optionalString(_ key: String, expected: String = "a string", allowEmpty: Bool = true) throws -> String? {
        guard object.contains(key) else { return nil }
        return try string(key, expected: expected, allowEmpty: allowEmpty)
    }

    /// A string, `null`, or absent: `.absent`, `.null`, `.value(s)`.
    public func nullableString(_ key: String, expected: String = "a string or null") throws -> Nullable<String> {
        guard let value = object[key] else { return .absent }
        switch value {
        case .null: return .null
        case .string(let s): return .value(s)
        default: throw wrongType(key, value, expected)
        }
    }

    public func int(_ key: String, in range: ClosedRange<Int64>, expected: String) throws -> Int {
        guard let value = object[key] else { throw missing(key, expected) }
        guard case .int(let i) = value else { throw wrongType(key, value, expected) }
        guard range.contains(i) else { throw InputError(.outOfRange, at: pointer / key, expected: expected, found: "\(i)") }
        return Int(i)
    }

    public func optionalInt(_ key: String, in range: ClosedRange<Int64>, expected: String) throws -> Int? {
        guard object.contains(key) else { return nil }
        return try int(key, in: range, expected: expected)
    }

    public func bool(_ key: String, expected: String = "true or false") throws -> Bool {
        guard let value = object[key] else { throw missing(key, expected) }
        guard case .bool(let b) = value else { throw wrongType(key, value, expected) }
        return b
    }

    public func optionalBool(_ key: String, expected: String = "true or false") throws -> Bool? {
        guard object.contains(key) else { return nil }
        return try bool(key, expected: expected)
    }

    public func stringArray(_ key: String, expected: String = "an array of strings", allowEmpty: Bool = true) throws -> [String] {
        guard let value = object[key] else { throw missing(key, expected) }
        guard case .array(let elements) = value else { throw wrongType(key, value, expected) }
        if !allowEmpty && elements.isEmpty { throw InputError(.invalidValue, at: pointer / key, expected: expected, found: "an empty array") }
        return try elements.enumerated().map { index, element in
            guard case .string(let s) = element else {
                throw InputError(.wrongType, at: pointer / key / index, expected: "a string", found: element.briefDescription)
            }
            return s
        }
    }

    /// An id (user, group, message, conversation): a string that follows `IdentifierRule`
    /// (at most 256 UTF-8 bytes, no control character).
    /// - Parameters:
    ///   - key: the member's key.
    ///   - expected: what the id is, for errors ("the sender's user id").
    ///   - allowEmpty: whether `""` is accepted.
    public func identifier(_ key: String, expected: String, allowEmpty: Bool = false) throws -> String {
        let id = try string(key, expected: expected, allowEmpty: allowEmpty)
        try IdentifierRule.check(id, at: pointer / key, what: expected)
        return id
    }

    /// ``identifier(_:expected:allowEmpty:)``, or `nil` when the key is absent.
    public func optionalIdentifier(_ key: String, expected: String, allowEmpty: Bool = false) throws -> String? {
        guard object.contains(key) else { return nil }
        return try identifier(key, expected: expected, allowEmpty: allowEmpty)
    }

    /// An array of ids, each following `IdentifierRule` and non-empty.
    /// - Parameters:
    ///   - key: the member's key.
    ///   - expected: what the array is, for errors.
    ///   - allowEmpty: whether `[]` is accepted.
    public func identifierArray(_ key: String, expected: String, allowEmpty: Bool = true) throws -> [String] {
        let ids = try stringArray(key, expected: expected, allowEmpty: allowEmpty)
        for (i, id) in ids.enumerated() {
            if id.isEmpty { throw InputError(.invalidValue, at: pointer / key / i, expected: "a non-empty id", found: "an empty string") }
            try IdentifierRule.check(id, at: pointer / key / i, what: "an id")
        }
        return ids
    }

    public func optionalStringArray(_ key: String, expected: String = "an array of strings") throws -> [String]? {
        guard object.contains(key) else { return nil }
        return try stringArray(key, expected: expected)
    }

    public func object(_ key: String, expected: String = "an object") throws -> FieldReader {
        guard let value = object[key] else { throw missing(key, expected) }
        return try FieldReader(value, at: pointer / key, what: expected)
    }

    public func optionalObject(_ key: String, expected: String = "an object") throws -> FieldReader? {
        guard let value = object[key] else { return nil }
        return try FieldReader(value, at: pointer / key, what: expected)
    }

    public func array(_ key: String, expected: String = "an array") throws -> [JSONValue] {
        guard let value = object[key] else { throw missing(key, expected) }
        guard case .array(let a) = value else { throw wrongType(key, value, expected) }
        return a
    }

    /// One of a fixed set of words.
    public func word<W: RawRepresentable & CaseIterable>(_ key: String, as type: W.Type) throws -> W where W.RawValue == String {
        // The hot path (a valid word) builds no message: `expected` is made only for an error.
        if case .string(let text)? = object[key], let word = W(rawValue: text) { return word }
        let expected = "one of " + W.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        let text = try string(key, expected: expected)
        throw InputError(.invalidValue, at: pointer / key, expected: expected, found: "\"\(text)\"")
    }

    /// A hex device token, returned in lower case.
    public func hexToken(_ key: String) throws -> String {
        let expected = "a device token as an even number of hex digits"
        let text = try string(key, expected: expected)
        let isHex = !text.isEmpty && text.utf8.count % 2 == 0 && text.utf8.allSatisfy {
            ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 70) || ($0 >= 97 && $0 <= 102)
        }
        guard isHex else {
            throw InputError(.invalidValue, at: pointer / key, expected: expected, found: JSONValue.string(text).compactText)
        }
        try IdentifierRule.check(text, at: pointer / key, what: "a device token")
        return text.lowercased()
    }
}

/// A value that may be absent, explicitly `null`, or present.
public enum Nullable<Wrapped: Hashable & Sendable>: Hashable, Sendable {
    case absent
    case null
    case value(Wrapped)
}
