import Foundation

/// An RFC 6901 JSON pointer, used to say where in a document something is wrong.
public struct JSONPointer: Hashable, Sendable, CustomStringConvertible {
    public private(set) var tokens: [String]

    public static let root = JSONPointer(tokens: [])

    public init(tokens: [String]) { self.tokens = tokens }

    /// Parses the textual form (`""` or `/a/0/b~1c`).
    public init?(_ text: String) {
        if text.isEmpty { self.tokens = []; return }
        guard text.hasPrefix("/") else { return nil }
        self.tokens = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    public func appending(_ key: String) -> JSONPointer {
        var copy = self
        copy.tokens.append(key)
        return copy
    }

    public func appending(_ index: Int) -> JSONPointer { appending(String(index)) }

    public static func / (lhs: JSONPointer, rhs: String) -> JSONPointer { lhs.appending(rhs) }
    public static func / (lhs: JSONPointer, rhs: Int) -> JSONPointer { lhs.appending(rhs) }

    /// The textual form; the root is written `/` in messages so that it is never an empty word.
    public var description: String {
        if tokens.isEmpty { return "/" }
        var out = ""
        for token in tokens {
            out += "/"
            out += token.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        }
        return out
    }
}
