import Foundation
import PushBridgeCore
import PushBridgeJSON

/// The Agora Chat silent-mode dialect (seeds 002, 003): remind types All / MentionOnly / None at app
/// and conversation level, do-not-disturb durations (minutes) and intervals (`H:MM`), mentions,
/// templates, preferred language; SDK message objects.
public struct AgoraSilentAdapter: DialectAdapter {
    public let id = "agora-silent"
    public let profile = Profile.agoraSilent
    public let settingCalls = [
        "initializeSDK", "registerForRemoteNotificationsWithDeviceToken", "updatePushDisplayName", "updatePushDisplayStyle",
        "setSilentModeForAll", "setSilentModeForConversation", "clearRemindTypeForConversation", "setPreferredNotificationLanguage",
    ]
    public let queryCalls = [
        "getSilentModeForAll", "getSilentModeForConversation", "getSilentModeForConversations", "getPreferredNotificationLanguage",
        "getPushNotificationOptionsFromServer",
    ]
    /// 7 × 24 × 60 minutes (seed 002/003 API reference).
    public static let maximumDurationMinutes: Int64 = 10_080
    /// `getSilentModeForConversations` answers at most this many conversations per call.
    public static let maximumConversationsPerQuery = 20

    let ext = EasemobExtension(allowsTemplate: true)
    let legacy = EasemobLegacyAdapter()

    /// Body types of the SDK message and what each shows.
    static let bodyTypes = ["text", "image", "voice", "video", "file", "location", "custom", "cmd"]

    public init() {}

    public var messageFields: [String] {
        ["id", "conversationId", "from", "to", "chatType", "body.type", "body.text", "body.action", "translations"] + ext.fieldPaths
    }

    public func newUser(_ user: UserID, timeZone: TimeZone) -> UserState {
        UserState(user: user, displayStyle: .simpleBanner, backgroundGraceSeconds: EasemobLegacyAdapter.backgroundGraceSeconds, timeZone: timeZone)
    }

    public func apply(_ call: JSONValue, at pointer: JSONPointer, to world: inout PushWorld, context: CallContext) throws {
        let name = try callName(of: call, at: pointer, allowQueries: false)
        let r = try FieldReader(call, at: pointer)
        var user = user(context.caller, in: world)
        switch name {
        case "initializeSDK", "updatePushDisplayName", "updatePushDisplayStyle":
            try legacy.apply(call, at: pointer, to: &world, context: context)  // identical in both Easemob dialects
            return
        case "registerForRemoteNotificationsWithDeviceToken":
            try EasemobLegacyAdapter.registerDevice(r, call: name, for: &user, in: &world, context: context)
        case "setSilentModeForAll":
            try r.allowOnly(["call", "remindType", "silentModeDuration", "silentModeStartTime", "silentModeEndTime"], context: name)
            let remind = try r.has("remindType") ? r.word("remindType", as: RemindType.self) : nil
            let period = try Self.duration(r, at: context.at)
            let window = try Self.interval(r)
            if remind == nil && period == nil && window == nil {
                throw InputError(.missingKey, at: pointer, expected: "at least one of remindType, silentModeDuration, silentModeStartTime + silentModeEndTime")
            }
            if let remind { user.app.remindType = remind }
            if let period { user.app.silentPeriod = period }
            if let window { user.app.window = window }
        case "setSilentModeForConversation":
            try Self.rejectInterval(r)
            try r.allowOnly(["call", "conversationId", "conversationType", "remindType", "silentModeDuration"], context: name)
            let key = try Self.conversation(r)
            let remind = try r.has("remindType") ? r.word("remindType", as: RemindType.self) : nil
            let period = try Self.duration(r, at: context.at)
            if remind == nil && period == nil {
                throw InputError(.missingKey, at: pointer, expected: "remindType and/or silentModeDuration")
            }
            var settings = user.settings(for: key)
            if let remind { settings.remindType = remind }
            if let period { settings.silentPeriod = period }
            user.setSettings(settings, for: key)
        case "clearRemindTypeForConversation":
            try r.allowOnly(["call", "conversationId", "conversationType"], context: name)
            let key = try Self.conversation(r)
            var settings = user.settings(for: key)
            settings.remindType = nil
            user.setSettings(settings, for: key)
        case "setPreferredNotificationLanguage":
            try r.allowOnly(["call", "languageCode"], context: name)
            let code = try r.string("languageCode", expected: "a language code such as \"EU\" (\"\" for none)")
            user.language = code.isEmpty ? nil : code
        default:
            throw InputError(.unknownCall, at: pointer / "call", expected: "a setting call", found: "\"\(name)\"")
        }
        world.users[context.caller] = user
    }

    /// `silentModeDuration` in minutes: `nil` when absent, `.some(nil)` for 0 (off).
    static func duration(_ r: FieldReader, at: Instant) throws -> Optional<SilentPeriod?> {
        guard let minutes = try r.optionalInt("silentModeDuration", in: 0...maximumDurationMinutes,
            expected: "a duration in minutes 0–\(maximumDurationMinutes) (0 turns it off)")
        else { return nil }
        if minutes == 0 { return .some(nil) }
        return .some(SilentPeriod(start: at, until: at.adding(minutes: Int64(minutes))))
    }

    /// The `H:MM` interval: `nil` when absent, `.some(nil)` for `0:00`–`0:00` (off).
    static func interval(_ r: FieldReader) throws -> Optional<DoNotDisturbWindow?> {
        let hasStart = r.has("silentModeStartTime")
        let hasEnd = r.has("silentModeEndTime")
        guard hasStart || hasEnd else { return nil }
        guard hasStart && hasEnd else {
            throw InputError(.missingKey, at: r.pointer / (hasStart ? "silentModeEndTime" : "silentModeStartTime"),
                expected: "silentModeStartTime and silentModeEndTime together")
        }
        let start = try clockTime(r, "silentModeStartTime")
        let end = try clockTime(r, "silentModeEndTime", allowsEndOfDay: true)
        if start == 0 && end == 0 { return .some(nil) }
        return .some(DoNotDisturbWindow(startMinute: start, endMinute: end))
    }

    /// Parses `H:MM` (hours 0–23, minutes 00–59) into a minute of the day. An end time may also be
    /// `24:00`, the end of the day, which is how an all-day window reads back.
    static func clockTime(_ r: FieldReader, _ key: String, allowsEndOfDay: Bool = false) throws -> Int {
        let expected = "a time \"H:MM\" with hours 0–23 and minutes 00–59" + (allowsEndOfDay ? ", or 24:00" : "")
        let text = try r.string(key, expected: expected)
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, (1...2).contains(parts[0].count), parts[1].count == 2,
            parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
            let hours = Int(parts[0]), let minutes = Int(parts[1])
        else { throw InputError(.invalidValue, at: r.pointer / key, expected: expected, found: "\"\(text)\"") }
        if allowsEndOfDay && hours == 24 && minutes == 0 { return 1440 }
        guard hours < 24, minutes < 60 else {
            throw InputError(.outOfRange, at: r.pointer / key, expected: expected, found: "\"\(text)\"")
        }
        return hours * 60 + minutes
    }

    static func rejectInterval(_ r: FieldReader) throws {
        for key in ["silentModeStartTime", "silentModeEndTime"] where r.has(key) {
            throw InputError(.invalidValue, at: r.pointer / key,
                expected: "remindType and/or silentModeDuration (an interval applies to the whole app only: use setSilentModeForAll)",
                found: "an interval on a conversation")
        }
    }

    static func conversation(_ r: FieldReader) throws -> ConversationKey {
        let id = try r.identifier("conversationId", expected: "the conversation id (the peer or the group)")
        let kind = try r.word("conversationType", as: ChatKind.self)
        return ConversationKey(kind, id)
    }

    public func query(_ call: JSONValue, at pointer: JSONPointer, in world: PushWorld, context: CallContext) throws -> JSONValue {
        let name = try callName(of: call, at: pointer)
        let r = try FieldReader(call, at: pointer)
        let user = user(context.caller, in: world)
        let now = context.at
        func expiry(_ period: SilentPeriod?) -> JSONValue {
            guard let period, period.until > now else { return .int(0) }
            return .int(period.until.milliseconds)
        }
        func conversationResult(_ key: ConversationKey) -> JSONValue {
            let settings = user.settings(for: key)
            return .object(
                JSONObject([
                    ("conversationId", .string(key.id)), ("conversationType", .string(key.kind.rawValue)),
                    ("remindType", settings.remindType.map { .string($0.rawValue) } ?? .null), ("expireTimestamp", expiry(settings.silentPeriod)),
                ]))
        }
        switch name {
        case "getSilentModeForAll":
            try r.allowOnly(["call"], context: name)
            let window = user.app.window
            return .object(
                JSONObject([
                    ("remindType", .string((user.app.remindType ?? .all).rawValue)),
                    ("expireTimestamp", expiry(user.app.silentPeriod)),
                    ("silentModeStartTime", window.map { .string(DoNotDisturbWindow.clockText($0.startMinute)) } ?? .null),
                    ("silentModeEndTime", window.map { .string(DoNotDisturbWindow.clockText($0.endMinute)) } ?? .null),
                ]))
        case "getSilentModeForConversation":
            try r.allowOnly(["call", "conversationId", "conversationType"], context: name)
            return conversationResult(try Self.conversation(r))
        case "getSilentModeForConversations":
            try r.allowOnly(["call", "conversations"], context: name)
            let list = try r.array("conversations", expected: "an array of {\"conversationId\", \"conversationType\"}")
            guard list.count <= Self.maximumConversationsPerQuery else {
                throw InputError(.outOfRange, at: pointer / "conversations",
                    expected: "at most \(Self.maximumConversationsPerQuery) conversations per call", found: "\(list.count)")
            }
            var result = JSONObject()
            for (i, item) in list.enumerated() {
                let c = try FieldReader(item, at: pointer / "conversations" / i, what: "a conversation {\"conversationId\", \"conversationType\"}")
                try c.allowOnly(["conversationId", "conversationType"], context: "a conversation")
                let key = try Self.conversation(c)
                let settings = user.settings(for: key)
                let active = settings.silentPeriod.map { $0.until > now } ?? false
                if settings.remindType != nil || active { result[key.id] = conversationResult(key) }
            }
            return .object(result)
        case "getPreferredNotificationLanguage":
            try r.allowOnly(["call"], context: name)
            return ["languageCode": .string(user.language ?? "")]
        case "getPushNotificationOptionsFromServer":
            try r.allowOnly(["call"], context: name)
            return .object(
                JSONObject([
                    ("displayName", user.displayName.map(JSONValue.string) ?? .null), ("displayStyle", .string(user.displayStyle.rawValue)),
                ]))
        default:
            throw InputError(.unknownCall, at: pointer / "call", expected: "a query call: " + queryCalls.joined(separator: ", "), found: "\"\(name)\"")
        }
    }

    public func address(of json: JSONValue, at pointer: JSONPointer) throws -> MessageAddress {
        let r = try FieldReader(json, at: pointer, what: "an SDK message object")
        let sender = try r.identifier("from", expected: "the sender's user id", allowEmpty: true)
        let to = try r.identifier("to", expected: "the receiver (Chat) or the group id (GroupChat)")
        let kind = try r.word("chatType", as: ChatKind.self)
        return MessageAddress(sender: sender, audience: kind == .group ? .group(to) : .users([to]))
    }

    public func readdressed(_ json: JSONValue, at pointer: JSONPointer, to receiver: UserID, id: String) throws -> JSONValue {
        let r = try FieldReader(json, at: pointer, what: "an SDK message object")
        guard try r.word("chatType", as: ChatKind.self) == .oneToOne else {
            throw InputError(.invalidValue, at: pointer / "chatType", expected: "\"Chat\" (a push task sends a one-to-one message to each receiver)", found: "\"GroupChat\"")
        }
        var object = r.object
        object["id"] = .string(id)
        object["to"] = .string(receiver)
        object["conversationId"] = .string(receiver)
        return .object(object)
    }

    public func message(_ json: JSONValue, at pointer: JSONPointer, context: MessageContext) throws -> PushMessage {
        let r = try FieldReader(json, at: pointer, what: "an SDK message object")
        try r.allowOnly(["id", "conversationId", "from", "to", "chatType", "body", "ext", "translations"], context: "an agora-silent message")
        let id = try r.identifier("id", expected: "the message id as a string")
        let from = try r.identifier("from", expected: "the sender's user id", allowEmpty: true)
        guard from == context.sender else {
            throw InputError(.invalidValue, at: pointer / "from", expected: "the scenario's sender \"\(context.sender)\"", found: "\"\(from)\"")
        }
        let kind = try r.word("chatType", as: ChatKind.self)
        let to = try r.identifier("to", expected: "the receiver (Chat) or the group id (GroupChat)")
        let conversationId = try r.identifier("conversationId", expected: "the sender-side conversation id")
        if kind == .oneToOne && to != context.receiver {
            throw InputError(.invalidValue, at: pointer / "to", expected: "the receiver \"\(context.receiver)\"", found: "\"\(to)\"")
        }
        guard conversationId == to else {
            throw InputError(.invalidValue, at: pointer / "conversationId",
                expected: "the sender-side conversation id \"\(to)\" (the peer, or the group)", found: "\"\(conversationId)\"")
        }
        let body = try r.object("body", expected: "the message body {\"type\", \"text\"}")
        try body.allowOnly(["type", "text", "action"], context: "a message body")
        let typeExpected = "one of " + Self.bodyTypes.map { "\"\($0)\"" }.joined(separator: ", ")
        let type = try body.string("type", expected: typeExpected)
        let part: ContentPart
        switch type {
        case "text": part = .text(try body.string("text", expected: "the text of a text body"))
        case "image": part = .image
        case "voice": part = .audio
        case "video": part = .video
        case "file": part = .file
        case "location": part = .location
        case "custom": part = .custom(description: try body.optionalString("text") ?? "")
        // EMCmdMessageBody: an action for the app, never pushed (Specification §14).
        case "cmd": part = .command(action: try body.string("action", expected: "the command's action"))
        default: throw InputError(.invalidValue, at: body.pointer / "type", expected: typeExpected, found: "\"\(type)\"")
        }
        if type != "cmd" && body.has("action") {
            throw InputError(.unknownKey, at: body.pointer / "action", expected: "action only in cmd bodies")
        }
        if type != "text" && type != "custom" && body.has("text") {
            throw InputError(.unknownKey, at: body.pointer / "text", expected: "text only in text and custom bodies")
        }
        var message = PushMessage(id: id, sender: context.sender, kind: kind, groupId: kind == .group ? to : nil, content: [part])
        if let translations = try r.optionalObject("translations", expected: "translations {languageCode: text}") {
            for (code, value) in translations.object {
                guard case .string(let text) = value else {
                    throw InputError(.wrongType, at: translations.pointer / code, expected: "the translated text as a string", found: value.briefDescription)
                }
                message.translations[code] = text
            }
        }
        if let extValue = r.value("ext") { try ext.apply(extValue, at: pointer / "ext", to: &message) }
        return message
    }
}
