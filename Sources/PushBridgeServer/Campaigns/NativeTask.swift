import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore
import PushBridgeVendorREST

/// The messages of a push task made with the native API (`POST /v1/apps/{app}/push-tasks`): one
/// one-to-one dialect message, sent to each receiver as if it were addressed to them alone and
/// decided as that dialect's messages are (do-not-disturb and remind types included, unless the
/// message itself forces the push).
struct NativeTask: PushTaskFamily {
    /// The family name a native task is stored under.
    static let family = "native"

    /// The service's dialects.
    let registry: DialectRegistry

    /// What a native task stores: `{"dialect", "sender", "message"}`.
    /// - Parameters:
    ///   - dialect: the message's dialect.
    ///   - sender: the sender (the message's own, or the request's `?sender=`).
    ///   - message: the message as given.
    static func stored(dialect: String, sender: UserID, message: JSONValue) -> JSONValue {
        .object(JSONObject([("dialect", .string(dialect)), ("sender", .string(sender)), ("message", message)]))
    }

    func taskMessages(request: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage] {
        let r = try FieldReader(request, at: .root, what: "a native task {\"dialect\", \"sender\", \"message\"}")
        let dialect = try r.string("dialect", expected: "the message's dialect")
        let sender = try r.string("sender", expected: "the sender")
        guard let message = r.value("message") else { throw InputError(.missingKey, at: .root / "message", expected: "the task's message") }
        let adapter = try registry.adapter(dialect, at: .root / "dialect")
        return try users.map { user in
            VendorMessage(
                dialect: dialect, message: try adapter.readdressed(message, at: .root / "message", to: user, id: id(user)), sender: sender, targets: [user],
                isGroup: false)
        }
    }
}

/// A native push task request: `{"message": {…}, "audience"?: {"labels", "anyLabels", "attributes",
/// "anyAttributes"}, "startAt"?: ISO 8601}`.
struct NativeTaskRequest {
    /// The longest a task may be scheduled ahead: 30 days (Easemob's).
    static let longestScheduleSeconds: Int64 = 30 * 86_400

    var message: JSONValue
    var audience: TaskAudience
    /// The scheduled start, or `nil` (now).
    var startAt: Instant?

    /// Reads a request body.
    /// - Parameters:
    ///   - body: the request body.
    ///   - now: the time it arrived (a start must be at most 30 days after it; one before it means now).
    init(_ body: JSONValue, now: Instant) throws {
        let r = try FieldReader(body, at: .root, what: "a push task {\"message\", \"audience\", \"startAt\"}")
        try r.allowOnly(["message", "audience", "startAt"], context: "a push task")
        guard let message = r.value("message") else {
            throw InputError(.missingKey, at: .root / "message", expected: "the message each receiver is sent, one-to-one in the request's ?dialect=")
        }
        self.message = message
        audience = .everyUser
        if let a = try r.optionalObject("audience", expected: "{\"labels\", \"anyLabels\", \"attributes\", \"anyAttributes\"} (each optional; none: every user)") {
            try a.allowOnly(["labels", "anyLabels", "attributes", "anyAttributes"], context: "an audience")
            func attributes(_ key: String) throws -> [UserAttribute] {
                guard let o = try a.optionalObject(key, expected: "an object of attribute names and values") else { return [] }
                return try o.object.keys.sorted().map { name in
                    UserAttribute(name: name, value: try o.string(name, expected: "the attribute's value, a string"))
                }
            }
            func labels(_ key: String, _ expected: String) throws -> [String] { a.has(key) ? try a.identifierArray(key, expected: expected) : [] }
            audience = TaskAudience(
                all: try labels("labels", "label names a receiver is in, each one"),
                any: try labels("anyLabels", "label names a receiver is in one of at least"),
                attributes: try attributes("attributes"), anyAttributes: try attributes("anyAttributes"))
        }
        if let text = try r.optionalString("startAt", expected: "the start, ISO 8601 (at most 30 days ahead)") {
            guard let start = Instant(iso8601: text), start.milliseconds - now.milliseconds <= Self.longestScheduleSeconds * 1_000 else {
                throw InputError(.invalidValue, at: .root / "startAt", expected: "the start, ISO 8601 such as 2026-03-02T09:15:00Z, at most 30 days ahead", found: JSONWriter.quoted(text))
            }
            startAt = start
        }
    }
}
