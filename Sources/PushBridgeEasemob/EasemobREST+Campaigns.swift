import PushBridgeCore
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
    ///   - limit: `?limit=`.
    ///   - cursor: `?cursor=`.
    ///   - kind: what the cursor pages (`label` or `labeluser`), so one list's cursor is refused by the other.
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

// Push tasks (`/push/list/label`, `/push/task`, campaign research §1.2–1.3).
extension EasemobREST {
    /// A push task as requested: its labels' names (none: every user), when it starts, and the body
    /// the task stores (`{"pushMessage", "strategy"}`), from which each receiver's push is made.
    public struct PushTaskRequest: Sendable {
        public var labels: [String]
        /// The scheduled start (`startDate`), or `nil`: at once.
        public var startAt: Instant?
        public var stored: JSONValue
    }

    /// How far ahead a `startDate` may be: at least an hour, at most 30 days.
    public static let taskStartRange: ClosedRange<Int64> = 3_600...(30 * 86_400)

    /// A `POST /push/list/label` (`toLabels`) or `POST /push/task` body: `targets` (1 to
    /// `maximumLabels` label names, for a label task), `startDate` (`yyyy-MM-dd HH:mm:ss`, UTC, an
    /// hour to 30 days ahead), `strategy` and `pushMessage` as `/push/single` reads them.
    /// - Parameters:
    ///   - body: the request body.
    ///   - toLabels: whether it is a label task.
    ///   - maximumLabels: the most labels a label task names (Easemob 1, Agora Chat 5).
    ///   - now: when it is requested.
    /// - Throws: `InputError` naming the pointer.
    public static func pushTask(_ body: JSONValue, toLabels: Bool, maximumLabels: Int, now: Instant) throws -> PushTaskRequest {
        let r = try FieldReader(body, at: .root, what: "a push task {\(toLabels ? "\"targets\", " : "")\"startDate\", \"strategy\", \"pushMessage\"}")
        try r.allowOnly((toLabels ? ["targets"] : []) + ["startDate", "strategy", "pushMessage"], context: "a push task")
        var labels: [String] = []
        if toLabels {
            let names = try r.stringArray("targets", expected: "1–\(maximumLabels) label names", allowEmpty: false)
            guard names.count <= maximumLabels else {
                throw InputError(.outOfRange, at: .root / "targets", expected: maximumLabels == 1 ? "one label name" : "at most \(maximumLabels) label names", found: "\(names.count)")
            }
            for (i, name) in names.enumerated() {
                labels.append(try labelName(name, at: .root / "targets" / i))
                guard !labels.dropLast().contains(name) else { throw InputError(.invalidValue, at: .root / "targets" / i, expected: "each label once", found: JSONValue.string(name).compactText) }
            }
        }
        var startAt: Instant?
        if let text = try r.optionalString("startDate", expected: "the start, yyyy-MM-dd HH:mm:ss (UTC)") {
            let expected = "the start, yyyy-MM-dd HH:mm:ss (UTC), an hour to 30 days ahead"
            let bytes = Array(text.utf8)
            guard bytes.count == 19, bytes[10] == UInt8(ascii: " "), let start = Instant(iso8601: String(text.prefix(10)) + "T" + String(text.suffix(8)) + "Z"),
                taskStartRange.contains((start.milliseconds - now.milliseconds) / 1000)
            else { throw InputError(.invalidValue, at: .root / "startDate", expected: expected, found: JSONValue.string(text).compactText) }
            startAt = start
        }
        var stored: [(key: String, value: JSONValue)] = [("pushMessage", r.value("pushMessage") ?? .null)]
        if let strategy = r.value("strategy") { stored.append(("strategy", strategy)) }
        let request = JSONValue.object(JSONObject(stored))
        _ = try pushMessages(request, target: "task", newID: { "task" })  // read as each receiver's will be
        return PushTaskRequest(labels: labels, startAt: startAt, stored: request)
    }

    /// Each receiver's push of a task: the stored body read as `/push/sync/{receiver}` reads it.
    public static func taskMessages(_ stored: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage] {
        var messages: [VendorMessage] = []
        messages.reserveCapacity(users.count)
        for user in users { messages += try pushMessages(stored, target: user, newID: { id(user) }) }
        return messages
    }
}
