/// A delivery set-up failure (a credential file that cannot be used, a bad URL): names the file or
/// setting and what was expected, never a secret's content.
public struct DeliveryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What kind of failure; the set may grow.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unreadableFile = "unreadable-file"
            case badCredential = "bad-credential"
            case badSetting = "bad-setting"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A credential file is missing or unreadable.
        public static let unreadableFile = Code(.unreadableFile)
        /// A credential file does not hold what it should (a P-256 `.p8`, a PEM certificate, a `.p12`).
        public static let badCredential = Code(.badCredential)
        /// A delivery setting is out of range.
        public static let badSetting = Code(.badSetting)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// The file or setting involved.
    public var subject: String
    /// What was expected there.
    public var expected: String

    public init(_ code: Code, subject: String, expected: String) {
        self.code = code
        self.subject = subject
        self.expected = expected
    }

    public var description: String { "delivery error [\(code)]: \(subject): expected \(expected)" }
}
