import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeVendorREST

/// Easemob / Agora Chat server REST (Specification §12, vendor facts §1.3 and §2.2) as dialect calls and
/// messages: legacy user push fields → `easemob-legacy` calls, notification settings and
/// language → `agora-silent` calls, the legacy send body → `easemob-legacy` messages, the current
/// send bodies → `agora-silent` messages. Everything here is translation; errors are
/// `InputError`s with pointers into the REST body.
public enum EasemobREST {
    /// The most users or groups one send may name.
    public static let maximumTargets = 600
    /// The largest `ignoreDuration`: 7 days in milliseconds.
    public static let maximumIgnoreDuration: Int64 = 604_800_000
    /// The sender when a send names none (Easemob's own default).
    public static let defaultSender = "admin"

    // MARK: Legacy user push fields

    /// The keys `PUT /{org}/{app}/users/{username}` takes.
    public static let userFields = [
        "nickname", "notification_display_style", "notification_no_disturbing", "notification_no_disturbing_start", "notification_no_disturbing_end",
    ]

    /// `PUT /{org}/{app}/users/{username}` → `easemob-legacy` calls, the last one the
    /// `getPushOptionsFromServer` query the answer is built from.
    /// - Parameter body: the request body.
    /// - Throws: `InputError` with the body's pointer.
    public static func userCalls(_ body: JSONValue) throws -> [JSONValue] {
        let r = try FieldReader(body, at: .root, what: "an object of user push fields (" + userFields.joined(separator: ", ") + ")")
        try r.allowOnly(userFields, context: "the user push fields")
        guard userFields.contains(where: r.has) else {
            throw InputError(.missingKey, at: .root, expected: "at least one of " + userFields.joined(separator: ", "))
        }
        var calls: [JSONValue] = []
        if let nickname = try r.optionalString("nickname", expected: "the push display name, at most 100 characters") {
            guard nickname.count <= 100 else {
                throw InputError(.outOfRange, at: .root / "nickname", expected: "at most 100 characters", found: "\(nickname.count) characters")
            }
            calls.append(["call": "updatePushDisplayName", "displayName": .string(nickname)])
        }
        if let style = try r.optionalInt("notification_display_style", in: 0...1, expected: "0 (simple banner) or 1 (message summary)") {
            calls.append(["call": "updatePushDisplayStyle", "style": .string(style == 0 ? "SimpleBanner" : "MessageSummary")])
        }
        let start = try hour(r, "notification_no_disturbing_start")
        let end = try hour(r, "notification_no_disturbing_end")
        if (start == nil) != (end == nil) {
            throw InputError(.missingKey, at: .root / (start == nil ? "notification_no_disturbing_start" : "notification_no_disturbing_end"),
                expected: "notification_no_disturbing_start and notification_no_disturbing_end together")
        }
        let enabled = try flag(r, "notification_no_disturbing")
        switch (enabled, start, end) {
        case (false?, _, _):
            calls.append(["call": "enableOfflinePush"])
        case (_, let s?, let e?):
            // REST hours are 0–23: start == end is all day, and an end of 0 is midnight (24 in the SDK call).
            let (from, to): (Int64, Int64) = s == e ? (0, 24) : (Int64(s), e == 0 ? 24 : Int64(e))
            calls.append(["call": "disableOfflinePushStart", "start": .int(from), "end": .int(to)])
        case (true?, nil, nil):
            calls.append(["call": "disableOfflinePushStart", "start": 0, "end": 24])
        default:
            break
        }
        calls.append(["call": "getPushOptionsFromServer"])
        return calls
    }

    /// A whole hour 0–23, as a number or a string of digits (Easemob documents a string, Agora a number).
    static func hour(_ r: FieldReader, _ key: String) throws -> Int? {
        guard let value = r.value(key) else { return nil }
        let expected = "a whole hour 0–23, as a number or a string such as \"8\""
        let hour: Int64
        switch value {
        case .int(let n): hour = n
        case .string(let s) where (1...2).contains(s.utf8.count) && s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }): hour = Int64(s)!
        default: throw InputError(.wrongType, at: r.pointer / key, expected: expected, found: value.briefDescription)
        }
        guard (0...23).contains(hour) else { throw InputError(.outOfRange, at: r.pointer / key, expected: expected, found: "\(hour)") }
        return Int(hour)
    }

    /// `true`/`false` (Easemob) or `1`/`0` (Agora legacy).
    static func flag(_ r: FieldReader, _ key: String) throws -> Bool? {
        guard let value = r.value(key) else { return nil }
        switch value {
        case .bool(let b): return b
        case .int(0): return false
        case .int(1): return true
        default: throw InputError(.wrongType, at: r.pointer / key, expected: "true or false (or 1 or 0)", found: value.briefDescription)
        }
    }

    /// The user entity of the answer, from `getPushOptionsFromServer`.
    /// - Parameters:
    ///   - username: the user.
    ///   - options: the query's result.
    public static func userEntity(_ username: String, options: JSONValue) -> JSONValue {
        // The SDK's all-day window 0–24 reads back as start == end, the REST form of all day; an end of 24 is 0.
        let start = options["noDisturbingStartH"] ?? 0
        var end = options["noDisturbingEndH"] ?? 0
        if case .int(24) = end { end = .int(0) }
        let style: Int64 = options["displayStyle"] == .string("MessageSummary") ? 1 : 0
        var entries: [(key: String, value: JSONValue)] = [("type", "user"), ("username", .string(username)), ("activated", true)]
        if case .string(let name)? = options["displayName"] { entries.append(("nickname", .string(name))) }
        entries += [
            ("notification_display_style", .int(style)), ("notification_no_disturbing", options["isNoDisturbEnable"] ?? false),
            ("notification_no_disturbing_start", start), ("notification_no_disturbing_end", end),
        ]
        return .object(JSONObject(entries))
    }

    // MARK: Registration

    /// The most users one registration request may carry (Easemob's batch limit).
    public static let maximumRegistrations = 60

    /// One user of `POST /{org}/{app}/users`: the id and the `easemob-legacy` calls its fields become.
    public struct Registration: Sendable {
        public var username: String
        public var calls: [JSONValue]
    }

    /// `POST /{org}/{app}/users`: one `{"username", "password", "nickname"?}` or an array of up to 60.
    /// The password is checked for presence and not kept (PushBridge has no login); the nickname is
    /// `updatePushDisplayName`. User ids follow Easemob's rule: 1–64 of `a-z 0-9 _ - .`.
    public static func registrations(_ body: JSONValue) throws -> [Registration] {
        let list: [(JSONValue, JSONPointer)]
        switch body {
        case .array(let items):
            guard (1...maximumRegistrations).contains(items.count) else {
                throw InputError(.outOfRange, at: .root, expected: "1–\(maximumRegistrations) users", found: "\(items.count) users")
            }
            list = items.enumerated().map { ($1, JSONPointer.root / $0) }
        default: list = [(body, .root)]
        }
        var seen = Set<String>()
        return try list.map { value, pointer in
            let r = try FieldReader(value, at: pointer, what: "a user {\"username\", \"password\", \"nickname\"?}")
            try r.allowOnly(["username", "password", "nickname"], context: "a user")
            let username = try r.string("username", expected: "a user id of 1–64 characters a-z, 0-9, '_', '-' or '.'", allowEmpty: false)
            guard username.utf8.count <= 64,
                username.utf8.allSatisfy({ ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 || $0 == 45 || $0 == 46 })
            else {
                throw InputError(.invalidValue, at: pointer / "username", expected: "a user id of 1–64 characters a-z, 0-9, '_', '-' or '.'",
                    found: JSONValue.string(username).compactText)
            }
            guard seen.insert(username).inserted else {
                throw InputError(.invalidValue, at: pointer / "username", expected: "each username once", found: JSONValue.string(username).compactText)
            }
            _ = try r.string("password", expected: "the user's password (required by the vendor; PushBridge does not keep it)", allowEmpty: false)
            var calls: [JSONValue] = []
            if let nickname = try r.optionalString("nickname", expected: "the push display name, at most 100 characters") {
                guard nickname.count <= 100 else {
                    throw InputError(.outOfRange, at: pointer / "nickname", expected: "at most 100 characters", found: "\(nickname.count) characters")
                }
                calls.append(["call": "updatePushDisplayName", "displayName": .string(nickname)])
            }
            return Registration(username: username, calls: calls)
        }
    }

    // MARK: Notification settings (agora-silent)

    /// Whose settings `…/notification/{chattype}/{key}` names.
    public enum NotificationTarget: Hashable, Sendable {
        /// `chattype=user` with the user's own id: the app level.
        case app
        case conversation(ConversationKey)
    }

    /// Reads `{chattype}/{key}` of the path.
    /// - Parameters:
    ///   - chattype: `user` or `chatgroup`.
    ///   - key: the peer, the group, or the user itself.
    ///   - username: the user of the path.
    public static func notificationTarget(chattype: String, key: String, username: String) throws -> NotificationTarget {
        switch chattype {
        case "user": return key == username ? .app : .conversation(ConversationKey(.oneToOne, key))
        case "chatgroup": return .conversation(ConversationKey(.group, key))
        default:
            throw InputError(.invalidValue, at: JSONPointer.root / "chattype", expected: "user or chatgroup", found: "\"\(chattype)\"")
        }
    }

    /// `PUT …/notification/{chattype}/{key}` → `agora-silent` calls, the last one the query the
    /// answer is built from.
    public static func notificationCalls(_ body: JSONValue, target: NotificationTarget) throws -> [JSONValue] {
        let r = try FieldReader(body, at: .root, what: "{\"type\", \"ignoreInterval\", \"ignoreDuration\"}")
        try r.allowOnly(["type", "ignoreInterval", "ignoreDuration"], context: "the notification settings")
        guard r.has("type") || r.has("ignoreInterval") || r.has("ignoreDuration") else {
            throw InputError(.missingKey, at: .root, expected: "at least one of type, ignoreInterval, ignoreDuration")
        }
        let typeExpected = target == .app ? "ALL, AT or NONE (DEFAULT is for conversations)" : "DEFAULT, ALL, AT or NONE"
        let type = try r.optionalString("type", expected: typeExpected)
        let remind: RemindType?
        switch type {
        case nil, "DEFAULT"?: remind = nil
        case "ALL"?: remind = .all
        case "AT"?: remind = .mentionOnly
        case "NONE"?: remind = RemindType.none
        case let other?: throw InputError(.invalidValue, at: .root / "type", expected: typeExpected, found: "\"\(other)\"")
        }
        if type == "DEFAULT" && target == .app {
            throw InputError(.invalidValue, at: .root / "type", expected: typeExpected, found: "\"DEFAULT\"")
        }
        let minutes: Int64? = try r.value("ignoreDuration").map { value in
            let expected = "milliseconds 0–\(maximumIgnoreDuration) (0 turns it off)"
            guard case .int(let ms) = value else { throw InputError(.wrongType, at: .root / "ignoreDuration", expected: expected, found: value.briefDescription) }
            guard (0...maximumIgnoreDuration).contains(ms) else { throw InputError(.outOfRange, at: .root / "ignoreDuration", expected: expected, found: "\(ms)") }
            return (ms + 59_999) / 60_000  // the SDK call takes whole minutes: rounded up
        }
        let interval = try r.optionalString("ignoreInterval", expected: "\"HH:MM-HH:MM\" or \"\"").map { try Self.interval($0) }

        var calls: [JSONValue] = []
        switch target {
        case .app:
            var call: [(key: String, value: JSONValue)] = [("call", "setSilentModeForAll")]
            if let remind { call.append(("remindType", .string(remind.rawValue))) }
            if let minutes { call.append(("silentModeDuration", .int(minutes))) }
            if let interval {
                call.append(("silentModeStartTime", .string(interval?.start ?? "0:00")))
                call.append(("silentModeEndTime", .string(interval?.end ?? "0:00")))
            }
            if call.count > 1 { calls.append(.object(JSONObject(call))) }
        case .conversation(let key):
            let conversation: [(key: String, value: JSONValue)] = [("conversationId", .string(key.id)), ("conversationType", .string(key.kind.rawValue))]
            if type == "DEFAULT" { calls.append(.object(JSONObject([("call", "clearRemindTypeForConversation")] + conversation))) }
            // An interval on a conversation has no effect (vendor facts §2.2): read, checked, not applied.
            var call: [(key: String, value: JSONValue)] = [("call", "setSilentModeForConversation")] + conversation
            if let remind { call.append(("remindType", .string(remind.rawValue))) }
            if let minutes { call.append(("silentModeDuration", .int(minutes))) }
            if call.count > 3 { calls.append(.object(JSONObject(call))) }
        }
        calls.append(notificationQuery(target))
        return calls
    }

    /// `"HH:MM-HH:MM"` → the SDK's `H:MM` start and end; `""` → `nil` (no window). Start == end is all
    /// day (the REST rule), which `00:00-00:00` keeps too: it becomes `0:00`–`24:00`, since the SDK
    /// call reads `0:00`–`0:00` as off.
    static func interval(_ text: String) throws -> (start: String, end: String)? {
        if text.isEmpty { return nil }
        let expected = "\"HH:MM-HH:MM\" with hours 00–23 and minutes 00–59, or \"\""
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            let slice = bytes[range]
            guard slice.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return slice.reduce(0) { $0 * 10 + Int($1 - 48) }
        }
        guard bytes.count == 11, bytes[2] == 58, bytes[5] == 45, bytes[8] == 58, let h1 = number(0..<2), let m1 = number(3..<5), let h2 = number(6..<8),
            let m2 = number(9..<11)
        else { throw InputError(.invalidValue, at: .root / "ignoreInterval", expected: expected, found: JSONValue.string(text).compactText) }
        guard h1 < 24, h2 < 24, m1 < 60, m2 < 60 else {
            throw InputError(.outOfRange, at: .root / "ignoreInterval", expected: expected, found: JSONValue.string(text).compactText)
        }
        func clock(_ h: Int, _ m: Int) -> String { "\(h):" + (m < 10 ? "0\(m)" : "\(m)") }
        if h1 == 0 && m1 == 0 && h2 == 0 && m2 == 0 { return ("0:00", "24:00") }
        return (clock(h1, m1), clock(h2, m2))
    }

    /// The query a notification answer is read from.
    public static func notificationQuery(_ target: NotificationTarget) -> JSONValue {
        switch target {
        case .app: return ["call": "getSilentModeForAll"]
        case .conversation(let key):
            return .object(
                JSONObject([
                    ("call", "getSilentModeForConversation"), ("conversationId", .string(key.id)), ("conversationType", .string(key.kind.rawValue)),
                ]))
        }
    }

    /// The answer's `data`: `type`, `ignoreInterval`, and `ignoreDuration` as the absolute expiry in ms (0 when none).
    public static func notificationData(_ result: JSONValue, target: NotificationTarget) -> JSONValue {
        let type: String
        switch result["remindType"] {
        case .string("All")?: type = "ALL"
        case .string("MentionOnly")?: type = "AT"
        case .string("None")?: type = "NONE"
        default: type = "DEFAULT"
        }
        var interval = ""
        if case .string(let start)? = result["silentModeStartTime"], case .string(let end)? = result["silentModeEndTime"] {
            interval = padded(start) + "-" + padded(end == "24:00" ? "00:00" : end)
        }
        return .object(JSONObject([("type", .string(type)), ("ignoreInterval", .string(interval)), ("ignoreDuration", result["expireTimestamp"] ?? 0)]))
    }

    static func padded(_ clock: String) -> String { clock.utf8.count == 4 ? "0" + clock : clock }

    // MARK: Language

    /// `PUT …/notification/language` → `setPreferredNotificationLanguage`, then the readback.
    public static func languageCalls(_ body: JSONValue) throws -> [JSONValue] {
        let r = try FieldReader(body, at: .root, what: "{\"translationLanguage\": code}")
        try r.allowOnly(["translationLanguage"], context: "the notification language")
        let code = try r.string("translationLanguage", expected: "a language code such as \"EU\", or \"\" for none")
        return [["call": "setPreferredNotificationLanguage", "languageCode": .string(code)], ["call": "getPreferredNotificationLanguage"]]
    }

    /// The answer's `data` for the language routes.
    public static func languageData(_ result: JSONValue) -> JSONValue {
        ["language": result["languageCode"] ?? ""]
    }

    // MARK: Templates

    /// `POST /{org}/{app}/notification/template` → the template.
    public static func template(_ body: JSONValue) throws -> PushTemplate {
        let r = try FieldReader(body, at: .root, what: "{\"name\", \"title_pattern\", \"content_pattern\"}")
        try r.allowOnly(["name", "title_pattern", "content_pattern"], context: "a push template")
        let name = try r.string("name", expected: "the template name", allowEmpty: false)
        let title = try r.optionalString("title_pattern", expected: "the title pattern, {0}, {1} … filled from title_args")
        let content = try r.optionalString("content_pattern", expected: "the content pattern, {0}, {1} … filled from content_args")
        guard title != nil || content != nil else { throw InputError(.missingKey, at: .root, expected: "title_pattern and/or content_pattern") }
        return PushTemplate(name: name, titlePattern: title, contentPattern: content)
    }

    /// A template as the vendor answers it.
    public static func templateData(_ template: PushTemplate) -> JSONValue {
        .object(
            JSONObject([
                ("name", .string(template.name)), ("title_pattern", template.titlePattern.map(JSONValue.string) ?? .null),
                ("content_pattern", template.contentPattern.map(JSONValue.string) ?? .null),
            ]))
    }

    // MARK: Messages

    /// `POST /{org}/{app}/messages` (the seed 000 body) → `easemob-legacy` messages: one to all
    /// the users, or one per group.
    /// - Parameters:
    ///   - body: the request body.
    ///   - newID: makes a message id.
    public static func legacyMessages(_ body: JSONValue, newID: () -> String) throws -> [VendorMessage] {
        let r = try FieldReader(body, at: .root, what: "a message {\"target_type\", \"target\", \"msg\", \"from\", \"ext\"}")
        try r.allowOnly(["target_type", "target", "msg", "from", "ext"], context: "a message")
        let type = try r.string("target_type", expected: "\"users\" or \"chatgroups\"")
        guard type == "users" || type == "chatgroups" else {
            throw InputError(.invalidValue, at: .root / "target_type", expected: "\"users\" or \"chatgroups\"", found: JSONValue.string(type).compactText)
        }
        let targets = try self.targets(r, "target")
        let sender = try r.optionalIdentifier("from", expected: "the sender's user id") ?? defaultSender
        func message(_ targets: [String]) -> VendorMessage {
            var o = r.object
            o["id"] = .string(newID())
            o["target"] = .array(targets.map(JSONValue.string))
            o["from"] = .string(sender)
            return VendorMessage(dialect: "easemob-legacy", message: .object(o), sender: sender, targets: targets, isGroup: type == "chatgroups")
        }
        return type == "users" ? [message(targets)] : targets.map { message([$0]) }
    }

    /// The REST message types of the current send bodies, what each body may carry, and the
    /// `agora-silent` body type each becomes.
    static let bodyTypes: [String: (keys: [String], sdkType: String)] = [
        "txt": (["msg"], "text"), "img": (["url", "filename", "secret", "size"], "image"), "audio": (["url", "filename", "length", "secret"], "voice"),
        "video": (["url", "filename", "thumb", "length", "secret", "file_length", "thumb_secret"], "video"),
        "file": (["url", "filename", "secret"], "file"), "loc": (["lat", "lng", "addr"], "location"), "custom": (["customEvent", "customExts"], "custom"),
        // A command (pass-through) message: stored, never pushed (Specification §14).
        "cmd": (["action"], "cmd"),
    ]

    /// `POST /{org}/{app}/messages/users` or `/messages/chatgroups` (`from`, `to`, `type`, `body`,
    /// `ext`) → one `agora-silent` message per receiver or group.
    /// - Parameters:
    ///   - body: the request body.
    ///   - kind: users (one-to-one) or chatgroups (group).
    ///   - newID: makes a message id.
    public static func messages(_ body: JSONValue, kind: ChatKind, newID: () -> String) throws -> [VendorMessage] {
        let r = try FieldReader(body, at: .root, what: "a message {\"from\", \"to\", \"type\", \"body\", \"ext\"}")
        try r.allowOnly(["from", "to", "type", "body", "ext", "sync_device", "routetype", "roam_ignore_users"], context: "a message")
        let targets = try self.targets(r, "to")
        let sender = try r.optionalIdentifier("from", expected: "the sender's user id") ?? defaultSender
        let typeExpected = "one of " + bodyTypes.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        let type = try r.string("type", expected: typeExpected)
        guard let shape = bodyTypes[type] else { throw InputError(.invalidValue, at: .root / "type", expected: typeExpected, found: JSONValue.string(type).compactText) }
        let content = try r.object("body", expected: "the message body of a \(type) message")
        try content.allowOnly(shape.keys, context: "a \(type) message body")
        var sdkBody: [(key: String, value: JSONValue)] = [("type", .string(shape.sdkType))]
        if type == "txt" { sdkBody.append(("text", .string(try content.string("msg", expected: "the text of the message")))) }
        if type == "cmd" { sdkBody.append(("action", .string(try content.string("action", expected: "the command's action")))) }
        if r.has("sync_device") { _ = try r.bool("sync_device") }
        if r.has("routetype") { _ = try r.string("routetype", expected: "\"ROUTE_ONLINE\" (accepted; pushes are for offline receivers anyway)") }
        if r.has("roam_ignore_users") { _ = try r.stringArray("roam_ignore_users") }
        return targets.map { target in
            var o: [(key: String, value: JSONValue)] = [
                ("id", .string(newID())), ("conversationId", .string(target)), ("from", .string(sender)), ("to", .string(target)),
                ("chatType", .string(kind.rawValue)), ("body", .object(JSONObject(sdkBody))),
            ]
            if let ext = r.value("ext") { o.append(("ext", ext)) }
            return VendorMessage(dialect: "agora-silent", message: .object(JSONObject(o)), sender: sender, targets: [target], isGroup: kind == .group)
        }
    }

    /// 1–600 distinct, non-empty ids.
    static func targets(_ r: FieldReader, _ key: String) throws -> [String] {
        try distinctIDs(r, key, maximum: maximumTargets, noun: "user or group id", plural: "ids")
    }

    /// An array of 1–`maximum` distinct, non-empty ids that keep the identifier rule.
    /// - Parameters:
    ///   - noun: what one id is, for errors (`username`).
    ///   - plural: how a count of them is said (`usernames`).
    static func distinctIDs(_ r: FieldReader, _ key: String, maximum: Int, noun: String, plural: String) throws -> [String] {
        let expected = "an array of 1–\(maximum) distinct \(plural)"
        let list = try r.stringArray(key, expected: expected, allowEmpty: false)
        guard list.count <= maximum else { throw InputError(.outOfRange, at: r.pointer / key, expected: expected, found: "\(list.count) \(plural)") }
        var seen = Set<String>()
        for (i, id) in list.enumerated() {
            guard !id.isEmpty else { throw InputError(.invalidValue, at: r.pointer / key / i, expected: "a non-empty \(noun)", found: "\"\"") }
            try IdentifierRule.check(id, at: r.pointer / key / i, what: "a \(noun)")
            guard seen.insert(id).inserted else { throw InputError(.invalidValue, at: r.pointer / key / i, expected: "each \(noun) once", found: JSONValue.string(id).compactText) }
        }
        return list
    }
}
