import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore
import PushBridgeVendorREST

// Easemob / Agora Chat push labels (`/push/label`, campaign research §1.1): names, bodies and pages.
extension EasemobREST {
    /// A label name: 1–64 of `a-z A-Z 0-9 _ - .`.
    public static func labelName(_ name: String, at pointer: JSONPointer) throws -> String {
        let expected = "a label name of 1–64 characters from a-z, A-Z, 0-9, _, - and ."
        guard !name.isEmpty, name.utf8.count <= 64,
            name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F || $0 == 0x2D || $0 == 0x2E })
        else { throw InputError(.invalidValue, at: pointer, expected: expected, found: JSONValue.string(name).compactText) }
        return name
    }

    /// The key a label is found by: its name, or its name in lower case for an app bound with Agora
    /// Chat's credentials (Agora's names ignore case; Easemob's do not).
    public static func labelKey(_ name: String, ignoringCase: Bool) -> String { ignoringCase ? name.lowercased() : name }

    /// A `POST /push/label` body: `{"name", "description"?}` (a description of at most 255 characters).
    public static func newLabel(_ body: JSONValue) throws -> (name: String, description: String) {
        let r = try FieldReader(body, at: .root, what: "a label {\"name\", \"description\"}")
        try r.allowOnly(["name", "description"], context: "a push label")
        let name = try labelName(try r.string("name", expected: "the label's name", allowEmpty: false), at: .root / "name")
        let description = try r.optionalString("description", expected: "what the label is for, at most 255 characters") ?? ""
        try limit(description, 255, at: .root / "description")
        return (name, description)
    }

    /// The most users one label call adds or removes.
    public static let maximumLabelUsersACall = 100

    /// A body naming a label's users: `{"usernames": [1–100 distinct users]}`.
    public static func labelUsers(_ body: JSONValue) throws -> [String] {
        let r = try FieldReader(body, at: .root, what: "{\"usernames\"}")
        try r.allowOnly(["usernames"], context: "a label's users")
        return try usernames(r, "usernames", maximum: maximumLabelUsersACall)
    }

    /// A page of labels or of a label's users: `limit` 1–100 (default 100) and the `cursor` an
    /// earlier answer gave (the last key of its page).
    /// - Parameters:
    ///   - of: what the cursor pages (`label` or `labeluser`), so one list's cursor is refused by the other.
    /// - Throws: `InputError` for a limit out of range or a cursor this service did not make.
    public static func labelPage(limit: String?, cursor: String?, of kind: String) throws -> (after: String?, limit: Int) {
        let size = try queryNumber(limit, "limit", 1...100, default: 100)
        guard let cursor, !cursor.isEmpty else { return (nil, size) }
        guard let bytes = StrictBase64.url.decode(cursor), let text = String(validating: bytes, as: UTF8.self), text.hasPrefix(kind + ":") else {
            throw InputError(.invalidValue, at: .root, expected: "?cursor= as an earlier answer gave it", found: JSONValue.string(cursor).compactText)
        }
        return (String(text.dropFirst(kind.count + 1)), size)
    }

    /// The `cursor` of the page after `key`.
    public static func labelCursor(after key: String, of kind: String) -> String {
        StrictBase64.url.encode(Array("\(kind):\(key)".utf8))
    }
}
