import Foundation

/// Bad input: a file, the JSON pointer of the offending value, and what was expected there.
///
/// Every rejection PushBridge makes (malformed JSON, an unknown call or key, a wrong type, an
/// out-of-range value, an unknown reference) is one of these. Its ``description`` is the one line
/// the command line prints before exiting with status 2.
public struct InputError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of rejection this is; the set may grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case malformedJSON = "malformed-json"
            case missingKey = "missing-key"
            case unknownKey = "unknown-key"
            case unknownCall = "unknown-call"
            case wrongType = "wrong-type"
            case outOfRange = "out-of-range"
            case invalidValue = "invalid-value"
            case unknownReference = "unknown-reference"
            case unreadableFile = "unreadable-file"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The text is not RFC 8259 JSON (or uses something strict JSON forbids, such as duplicate keys).
        public static let malformedJSON = Code(.malformedJSON)
        /// A required key is absent.
        public static let missingKey = Code(.missingKey)
        /// A key the dialect or scenario format does not define.
        public static let unknownKey = Code(.unknownKey)
        /// A call name the dialect does not define.
        public static let unknownCall = Code(.unknownCall)
        /// A value of the wrong JSON type.
        public static let wrongType = Code(.wrongType)
        /// A number or count outside its allowed range.
        public static let outOfRange = Code(.outOfRange)
        /// A value of the right type with an invalid form (a non-hex token, an unknown enum word).
        public static let invalidValue = Code(.invalidValue)
        /// A name that refers to something that does not exist (a certificate, a dialect, a profile).
        public static let unknownReference = Code(.unknownReference)
        /// The file could not be read.
        public static let unreadableFile = Code(.unreadableFile)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// The file the input came from, when there is one.
    public var file: String?
    /// Where in the document the problem is.
    public var pointer: JSONPointer
    /// What was expected at ``pointer``.
    public var expected: String
    /// What was found instead, when it helps.
    public var found: String?

    /// Creates an input error.
    /// - Parameters:
    ///   - code: the kind of rejection.
    ///   - pointer: where in the document the problem is.
    ///   - expected: what was expected there, as a phrase ("an integer hour 0–23").
    ///   - found: what was found instead, if useful.
    ///   - file: the file name, if known now (``InputError/in(file:)`` adds it later).
    public init(_ code: Code, at pointer: JSONPointer, expected: String, found: String? = nil, file: String? = nil) {
        self.code = code
        self.pointer = pointer
        self.expected = expected
        self.found = found
        self.file = file
    }

    /// The same error, attributed to a file (kept if a file is already set).
    public func `in`(file: String) -> InputError {
        var copy = self
        if copy.file == nil { copy.file = file }
        return copy
    }

    /// The same error with its pointer placed under a prefix (for documents embedded in others).
    public func under(_ prefix: JSONPointer) -> InputError {
        var copy = self
        copy.pointer = JSONPointer(tokens: prefix.tokens + pointer.tokens)
        return copy
    }

    /// `FILE: at /pointer: expected …, found …` on one line.
    public var description: String {
        var line = "\(file ?? "<input>"): at \(pointer): expected \(expected)"
        if let found { line += ", found \(found)" }
        line += " [\(code)]"
        return line.replacingOccurrences(of: "\n", with: " ")
    }
}

extension JSONValue {
    /// A short rendering of the value for error messages: type and (shortened) text.
    public var briefDescription: String {
        let text = compactText
        let shown = text.count > 60 ? String(text.prefix(57)) + "…" : text
        return "\(shown) (\(typeName))"
    }
}
