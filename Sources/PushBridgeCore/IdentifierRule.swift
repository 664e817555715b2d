import PushBridgeJSON

/// The one rule every id follows, wherever it comes from (CLI, native API, vendor REST) and
/// whichever store keeps it: user, group, message, device token, conversation and account ids.
///
/// An id is at most ``maximumBytes`` UTF-8 bytes and holds no control character (Unicode's `Cc`:
/// U+0000–U+001F, U+007F–U+009F). A NUL would be cut by a C string (SQLite's `json_each` stops at
/// one, so `"u2\u0000evil"` became `"u2"`), and a line break or escape would forge log lines and
/// break the line-based tools that read ids. Lone surrogates cannot reach an id at all: the JSON
/// parser refuses them, and a path segment that is not UTF-8 is refused when it is decoded.
/// App ids have a stricter rule of their own (the service's `POST /v1/apps`).
public enum IdentifierRule {
    /// The most UTF-8 bytes an id may have.
    public static let maximumBytes = 256

    /// The rule in words, for the `expected` of errors.
    public static let summary = "at most \(maximumBytes) UTF-8 bytes and no control character (U+0000–U+001F, U+007F–U+009F)"

    /// What is wrong with an id, or `nil` when it follows the rule. Bytes, not characters: it
    /// runs on every id of every request.
    /// - Parameter id: the id.
    /// - Returns: `"a control character (U+000A) at byte 3"`, `"300 bytes"`, or `nil`.
    public static func violation(in id: String) -> String? {
        var id = id
        return id.withUTF8 { bytes -> String? in
            if bytes.count > maximumBytes { return "\(bytes.count) bytes" }
            var i = 0
            while i < bytes.count {
                let byte = bytes[i]
                if byte < 0x20 || byte == 0x7F {
                    return "a control character (U+\(hex4(UInt32(byte)))) at byte \(i)"
                }
                // U+0080–U+009F are 0xC2 0x80–0x9F in UTF-8.
                if byte == 0xC2, i + 1 < bytes.count, bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x9F {
                    return "a control character (U+\(hex4(UInt32(bytes[i + 1])))) at byte \(i)"
                }
                i += 1
            }
            return nil
        }
    }

    /// Whether an id follows the rule.
    /// - Parameter id: the id.
    public static func allows(_ id: String) -> Bool { violation(in: id) == nil }

    /// Throws `invalid-value` at `pointer` when an id breaks the rule.
    /// - Parameters:
    ///   - id: the id.
    ///   - pointer: where it is in its document (or `{user}`, `?sender` for a path or query).
    ///   - what: what the id is ("the user id"), for the error.
    public static func check(_ id: String, at pointer: JSONPointer, what: String = "an id") throws {
        guard let violation = violation(in: id) else { return }
        throw InputError(.invalidValue, at: pointer, expected: "\(what): \(summary)", found: violation)
    }

    static func hex4(_ value: UInt32) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        for shift in stride(from: 12, through: 0, by: -4) { out.append(digits[Int((value >> UInt32(shift)) & 0xF)]) }
        return String(decoding: out, as: UTF8.self)
    }
}
