import Foundation
import PushBridgeCore
import PushBridgeJSON

/// One scenario (Specification §6): app, sender, receiver, message and optionally what to expect.
public struct Scenario: Sendable {
    /// One party: a user and the calls made on its behalf during setup.
    public struct Party: Sendable {
        public var user: UserID
        /// Call objects with their pointers, `at` already read out.
        public var calls: [(call: JSONValue, at: Instant, pointer: JSONPointer)]
    }

    public var name: String
    public var description: String?
    public var dialect: String
    public var now: Instant
    public var app: AppConfiguration
    public var sender: Party
    public var receiver: Party
    public var timeZone: TimeZone
    public var presence: Presence
    public var badge: Int
    public var message: JSONValue
    /// The profile named by the scenario, if any (defaults to the dialect).
    public var profile: String?
    /// The expectation, validated for shape; the conformance harness interprets it.
    public var expect: JSONValue?
    /// The whole document as read.
    public var document: JSONValue

    static let topLevelKeys = [
        "name", "description", "seeds", "dialect", "now", "app", "sender", "receiver", "message", "profile", "expect", "translatedFrom", "losses",
    ]

    /// Reads a scenario document.
    /// - Parameter document: the parsed JSON.
    /// - Throws: `InputError` naming the pointer and what was expected.
    public init(_ document: JSONValue) throws {
        let root = try FieldReader(document, at: .root, what: "a scenario object")
        try root.allowOnly(Scenario.topLevelKeys, context: "a scenario")
        self.document = document
        name = try root.string("name", expected: "the scenario's name as a string", allowEmpty: false)
        description = try root.optionalString("description")
        if root.has("seeds") { _ = try root.stringArray("seeds", expected: "an array of seed file names") }
        dialect = try root.string("dialect", expected: "a dialect id string")
        let nowText = try root.string("now", expected: "an ISO 8601 date-time such as 2026-03-02T09:15:00Z")
        guard let now = Instant(iso8601: nowText) else {
            throw InputError(.invalidValue, at: JSONPointer.root / "now", expected: "an ISO 8601 date-time such as 2026-03-02T09:15:00Z",
                found: "\"\(nowText)\"")
        }
        self.now = now
        app = try root.optionalObject("app").map(Scenario.readApp) ?? AppConfiguration()

        let senderReader = try root.object("sender", expected: "the sender: {\"user\": id, \"calls\": [...]}")
        try senderReader.allowOnly(["user", "calls"], context: "the sender")
        sender = try Scenario.readParty(senderReader, now: now)

        let receiverReader = try root.object("receiver", expected: "the receiver: {\"user\": id, \"calls\": [...], …}")
        try receiverReader.allowOnly(["user", "calls", "timezone", "presence", "backgroundSince", "badge"], context: "the receiver")
        receiver = try Scenario.readParty(receiverReader, now: now)
        if receiver.user == sender.user {
            throw InputError(.invalidValue, at: JSONPointer.root / "receiver" / "user", expected: "a user other than the sender",
                found: "\"\(receiver.user)\"")
        }
        let zoneName = try receiverReader.optionalString("timezone", expected: "an IANA time zone name such as Asia/Shanghai") ?? "UTC"
        guard let zone = TimeZone(identifier: zoneName) else {
            throw InputError(.unknownReference, at: receiverReader.pointer / "timezone", expected: "an IANA time zone name such as Asia/Shanghai",
                found: "\"\(zoneName)\"")
        }
        timeZone = zone
        badge = try receiverReader.optionalInt("badge", in: 0...99_999, expected: "the badge counter before the message, 0–99999") ?? 0
        presence = try Scenario.readPresence(receiverReader)

        guard let message = root.value("message") else {
            throw InputError(.missingKey, at: JSONPointer.root / "message", expected: "the message in the dialect's shape")
        }
        guard case .object = message else {
            throw InputError(.wrongType, at: JSONPointer.root / "message", expected: "the message as an object", found: message.briefDescription)
        }
        self.message = message
        profile = try root.optionalString("profile", expected: "a profile id string")
        // Left by `pushbridge translate`: informational, so a translated scenario can be decided as it is.
        if root.has("translatedFrom") { _ = try root.string("translatedFrom", expected: "the dialect the scenario was translated from") }
        if root.has("losses") { _ = try root.array("losses", expected: "the translation's losses [{\"field\", \"why\"}]") }
        expect = root.value("expect")
        if let expect { try Scenario.validateExpectation(expect, at: JSONPointer.root / "expect") }
    }

    /// Reads an app configuration `{"certificates": [...], "templates": [...]}` (the scenario's `app`).
    /// - Parameters:
    ///   - value: the JSON object.
    ///   - pointer: where it is in its document.
    public static func app(from value: JSONValue, at pointer: JSONPointer) throws -> AppConfiguration {
        try readApp(try FieldReader(value, at: pointer, what: "an app object {\"certificates\": [...], \"templates\": [...]}"))
    }

    /// Reads an array of call objects, each with an optional `at` (ISO 8601, default `now`).
    /// - Parameters:
    ///   - value: the JSON array.
    ///   - pointer: where it is in its document.
    ///   - now: the instant of calls without `at`.
    /// - Returns: the calls without `at`, each with its instant and pointer.
    public static func calls(from value: JSONValue, at pointer: JSONPointer, now: Instant) throws -> [(call: JSONValue, at: Instant, pointer: JSONPointer)] {
        guard case .array(let items) = value else {
            throw InputError(.wrongType, at: pointer, expected: "an array of call objects", found: value.briefDescription)
        }
        return try items.enumerated().map { i, value in
            let pointer = pointer / i
            let call = try FieldReader(value, at: pointer, what: "a call object {\"call\": name, …}")
            var at = now
            var stripped = call.object
            if call.has("at") {
                let text = try call.string("at", expected: "an ISO 8601 date-time")
                guard let instant = Instant(iso8601: text) else {
                    throw InputError(.invalidValue, at: pointer / "at", expected: "an ISO 8601 date-time such as 2026-03-02T09:15:00Z", found: "\"\(text)\"")
                }
                at = instant
                stripped["at"] = nil
            }
            return (.object(stripped), at, pointer)
        }
    }

    static func readApp(_ reader: FieldReader) throws -> AppConfiguration {
        try reader.allowOnly(["certificates", "templates"], context: "app")
        var app = AppConfiguration()
        if reader.has("certificates") {
            for (i, value) in try reader.array("certificates", expected: "an array of certificates").enumerated() {
                let c = try FieldReader(value, at: reader.pointer / "certificates" / i, what: "a certificate {\"name\" or \"busiId\", \"bundleId\", \"environment\"}")
                try c.allowOnly(["name", "busiId", "bundleId", "environment"], context: "a certificate")
                let name = try c.optionalString("name", expected: "the certificate name as a string", allowEmpty: false)
                var busiId: String? = nil
                if let value = c.value("busiId") {
                    switch value {
                    case .int(let n) where n >= 0: busiId = String(n)
                    case .string(let s) where !s.isEmpty: busiId = s
                    default:
                        throw InputError(.wrongType, at: c.pointer / "busiId", expected: "the certificate id as a non-negative integer or string",
                            found: value.briefDescription)
                    }
                }
                if name == nil && busiId == nil {
                    throw InputError(.missingKey, at: c.pointer, expected: "a certificate with \"name\" or \"busiId\"")
                }
                let bundleId = try c.string("bundleId", expected: "the app's bundle id", allowEmpty: false)
                let environment = try c.word("environment", as: APNsEnvironment.self)
                app.certificates.append(Certificate(name: name, busiId: busiId, bundleId: bundleId, environment: environment))
            }
        }
        if reader.has("templates") {
            for (i, value) in try reader.array("templates", expected: "an array of templates").enumerated() {
                let t = try FieldReader(value, at: reader.pointer / "templates" / i, what: "a template {\"name\", \"title_pattern\", \"content_pattern\"}")
                try t.allowOnly(["name", "title_pattern", "content_pattern"], context: "a template")
                app.templates.append(
                    PushTemplate(
                        name: try t.string("name", expected: "the template name", allowEmpty: false),
                        titlePattern: try t.optionalString("title_pattern"), contentPattern: try t.optionalString("content_pattern")))
            }
        }
        return app
    }

    static func readParty(_ reader: FieldReader, now: Instant) throws -> Party {
        let user = try reader.identifier("user", expected: "a user id string")
        var calls: [(call: JSONValue, at: Instant, pointer: JSONPointer)] = []
        if let value = reader.value("calls") { calls = try Scenario.calls(from: value, at: reader.pointer / "calls", now: now) }
        return Party(user: user, calls: calls)
    }

    /// Reads `presence` (`online`, `background` with `backgroundSince`, or `offline`, the default) from
    /// an object: a scenario's receiver, or a server's presence report.
    /// - Parameter reader: the object holding the keys.
    public static func readPresence(_ reader: FieldReader) throws -> Presence {
        let word = try reader.optionalString("presence", expected: "one of \"online\", \"background\", \"offline\"") ?? "offline"
        switch word {
        case "online", "offline":
            if reader.has("backgroundSince") {
                throw InputError(.unknownKey, at: reader.pointer / "backgroundSince", expected: "backgroundSince only with presence \"background\"")
            }
            return word == "online" ? .online : .offline
        case "background":
            let text = try reader.string("backgroundSince", expected: "the ISO 8601 instant the app went to the background")
            guard let since = Instant(iso8601: text) else {
                throw InputError(.invalidValue, at: reader.pointer / "backgroundSince", expected: "an ISO 8601 date-time", found: "\"\(text)\"")
            }
            return .background(since: since)
        default:
            throw InputError(.invalidValue, at: reader.pointer / "presence", expected: "one of \"online\", \"background\", \"offline\"",
                found: "\"\(word)\"")
        }
    }

    /// Checks the shape of an expectation (`push`, `payload`, `deliveries`, `reason`, `queries`).
    /// The single `headers` / `device` keys of earlier versions are refused with a pointer to `deliveries`.
    /// - Parameters:
    ///   - value: the expectation.
    ///   - pointer: where it is.
    public static func validateExpectation(_ value: JSONValue, at pointer: JSONPointer) throws {
        let e = try FieldReader(value, at: pointer, what: "an expectation object")
        for old in ["headers", "device"] where e.has(old) {
            throw InputError(.unknownKey, at: pointer / old,
                expected: "expect.deliveries [{\"device\", \"headers\"}, …], one per device (Specification §10 replaced the single \(old) key)",
                found: "the key \"\(old)\"")
        }
        try e.allowOnly(["push", "payload", "deliveries", "reason", "queries"], context: "an expectation")
        if e.has("push") { _ = try e.bool("push") }
        if e.has("payload") { _ = try e.object("payload", expected: "the expected payload object") }
        if e.has("deliveries") {
            for (i, d) in try e.array("deliveries", expected: "an array of {\"device\", \"headers\"}, newest binding first").enumerated() {
                let delivery = try FieldReader(d, at: pointer / "deliveries" / i, what: "a delivery {\"device\": {\"token\", \"environment\"}, \"headers\": {…}}")
                try delivery.allowOnly(["device", "headers"], context: "a delivery")
                _ = try delivery.object("device", expected: "the expected device {\"token\", \"environment\"}")
                _ = try delivery.object("headers", expected: "the expected headers object")
            }
        }
        if e.has("reason") { _ = try e.word("reason", as: SuppressionReason.self) }
        if e.has("queries") {
            for (i, q) in try e.array("queries", expected: "an array of {\"call\", …, \"result\"}").enumerated() {
                let query = try FieldReader(q, at: pointer / "queries" / i, what: "a query {\"call\": name, …params, \"result\": {…}}")
                _ = try query.string("call", expected: "a query call name")
                guard query.has("result") else {
                    throw InputError(.missingKey, at: query.pointer / "result", expected: "the expected result of the query")
                }
                if query.has("user") { _ = try query.string("user", expected: "the user whose state is queried") }
                if query.has("dialect") { _ = try query.string("dialect", expected: "the dialect whose query call this is") }
            }
        }
    }
}
