import Foundation
import PushBridgeCore
import PushBridgeJSON

/// The Easemob/Agora legacy push dialect (seeds 000, 001): display name and style,
/// `disableOfflinePushStart:end:` whole-hour windows, group push disable, REST message bodies.
public struct EasemobLegacyAdapter: DialectAdapter {
    public let id = "easemob-legacy"
    public let profile = Profile.easemobLegacy
    public let settingCalls = [
        "initializeSDK", "bindDeviceToken", "updatePushDisplayName", "updatePushDisplayStyle", "enableOfflinePush",
        "disableOfflinePushStart", "updatePushServiceForGroups",
    ]
    public let queryCalls = ["getPushOptionsFromServer"]
    /// A backgrounded Easemob SDK keeps its connection for two minutes (seed 000, "SDK running status").
    public static let backgroundGraceSeconds: Int64 = 120
    /// The longest push display name the server accepts.
    public static let maximumDisplayNameLength = 100

    let ext = EasemobExtension(allowsTemplate: false)

    public init() {}

    public var messageFields: [String] {
        ["id", "target_type", "target", "from", "msg.type", "msg.msg", "msg.action"] + ext.fieldPaths
    }

    public func newUser(_ user: UserID, timeZone: TimeZone) -> UserState {
        UserState(user: user, displayStyle: .simpleBanner, backgroundGraceSeconds: Self.backgroundGraceSeconds, timeZone: timeZone)
    }

    public func apply(_ call: JSONValue, at pointer: JSONPointer, to world: inout PushWorld, context: CallContext) throws {
        let name = try callName(of: call, at: pointer, allowQueries: false)
        let r = try FieldReader(call, at: pointer)
        var user = user(context.caller, in: world)
        switch name {
        case "initializeSDK":
            try r.allowOnly(["call", "appkey", "apnsCertName"], context: name)
            _ = try r.string("appkey", expected: "the appkey as \"org#app\"", allowEmpty: false)
            let certName = try r.string("apnsCertName", expected: "a certificate name from app.certificates", allowEmpty: false)
            guard let certificate = world.app.certificate(named: certName) else {
                throw InputError(.unknownReference, at: pointer / "apnsCertName",
                    expected: "a certificate name listed in app.certificates (" + world.app.certificates.compactMap(\.name).joined(separator: ", ") + ")",
                    found: "\"\(certName)\"")
            }
            user.boundCertificate = certificate
        case "bindDeviceToken":
            try Self.registerDevice(r, call: name, for: &user, in: &world, context: context)
        case "updatePushDisplayName":
            try r.allowOnly(["call", "displayName"], context: name)
            let displayName = try r.string("displayName", expected: "the push display name as a string")
            guard displayName.count <= Self.maximumDisplayNameLength else {
                throw InputError(.outOfRange, at: pointer / "displayName", expected: "at most \(Self.maximumDisplayNameLength) characters",
                    found: "\(displayName.count) characters")
            }
            user.displayName = displayName
        case "updatePushDisplayStyle":
            try r.allowOnly(["call", "style"], context: name)
            user.displayStyle = try r.word("style", as: DisplayStyle.self)
        case "enableOfflinePush":
            try r.allowOnly(["call"], context: name)
            user.app.window = nil
        case "disableOfflinePushStart":
            try r.allowOnly(["call", "start", "end"], context: name)
            let start = try r.int("start", in: 0...23, expected: "a whole start hour 0–23")
            let end = try r.int("end", in: 1...24, expected: "a whole end hour 1–24")
            user.app.window = DoNotDisturbWindow(startMinute: start * 60, endMinute: end * 60)
        case "updatePushServiceForGroups":
            try r.allowOnly(["call", "groupIds", "disablePush"], context: name)
            let groups = try r.identifierArray("groupIds", expected: "a non-empty array of group ids", allowEmpty: false)
            let disable = try r.bool("disablePush")
            for group in groups {
                let key = ConversationKey(.group, group)
                var settings = user.settings(for: key)
                settings.remindType = disable ? RemindType.none : nil
                user.setSettings(settings, for: key)
            }
        default:
            throw InputError(.unknownCall, at: pointer / "call", expected: "a setting call", found: "\"\(name)\"")
        }
        world.users[context.caller] = user
    }

    /// Registers `deviceToken` under the certificate bound by `initializeSDK` (both Easemob dialects).
    static func registerDevice(_ r: FieldReader, call name: String, for user: inout UserState, in world: inout PushWorld, context: CallContext) throws {
        try r.allowOnly(["call", "deviceToken"], context: name)
        let token = try r.hexToken("deviceToken")
        guard let certificate = user.boundCertificate else {
            throw InputError(.invalidValue, at: r.pointer / "call", expected: "initializeSDK with an apnsCertName before \(name)",
                found: "no certificate bound for user \(context.caller)")
        }
        world.bind(Device(token: token, certificate: certificate, boundAt: context.at), to: &user)
    }

    public func query(_ call: JSONValue, at pointer: JSONPointer, in world: PushWorld, context: CallContext) throws -> JSONValue {
        let name = try callName(of: call, at: pointer)
        let r = try FieldReader(call, at: pointer)
        let user = user(context.caller, in: world)
        switch name {
        case "getPushOptionsFromServer":
            try r.allowOnly(["call"], context: name)
            let hours = user.app.window?.wholeHours ?? (0, 0)
            return .object(
                JSONObject([
                    ("displayName", user.displayName.map(JSONValue.string) ?? .null),
                    ("displayStyle", .string(user.displayStyle.rawValue)),
                    ("isNoDisturbEnable", .bool(user.app.window != nil)),
                    ("noDisturbingStartH", .int(Int64(hours.0))),
                    ("noDisturbingEndH", .int(Int64(hours.1))),
                ]))
        default:
            throw InputError(.unknownCall, at: pointer / "call", expected: "a query call: " + queryCalls.joined(separator: ", "), found: "\"\(name)\"")
        }
    }

    /// The message types of the REST send body and what each shows.
    static let messageTypes: [String: (allowed: [String], part: @Sendable (FieldReader) throws -> ContentPart)] = [
        "txt": (["type", "msg"], { .text(try $0.string("msg", expected: "the text of the message")) }),
        "img": (["type", "url", "filename", "secret", "size"], { _ in .image }),
        "audio": (["type", "url", "filename", "length", "secret"], { _ in .audio }),
        "video": (["type", "url", "filename", "thumb", "length", "secret", "file_length", "thumb_secret"], { _ in .video }),
        "file": (["type", "url", "filename", "secret"], { _ in .file }),
        "loc": (["type", "lat", "lng", "addr"], { _ in .location }),
        // A command (pass-through) message: never pushed (Specification §14, Rulings).
        "cmd": (["type", "action"], { .command(action: try $0.string("action", expected: "the command's action")) }),
    ]

    public func address(of json: JSONValue, at pointer: JSONPointer) throws -> MessageAddress {
        let r = try FieldReader(json, at: pointer, what: "a REST message body")
        let targets = try r.identifierArray("target", expected: "a non-empty array of user or group ids", allowEmpty: false)
        let sender = try r.optionalIdentifier("from", expected: "the sender's user id", allowEmpty: true)
        switch try r.string("target_type", expected: "\"users\" or \"chatgroups\"") {
        case "users": return MessageAddress(sender: sender, audience: .users(targets))
        case "chatgroups": return MessageAddress(sender: sender, audience: .group(targets[0]))
        case let other: throw InputError(.invalidValue, at: pointer / "target_type", expected: "\"users\" or \"chatgroups\"", found: "\"\(other)\"")
        }
    }

    public func readdressed(_ json: JSONValue, at pointer: JSONPointer, to receiver: UserID, id: String) throws -> JSONValue {
        let r = try FieldReader(json, at: pointer, what: "a REST message body")
        let type = try r.string("target_type", expected: "\"users\" (a push task sends a one-to-one message to each receiver)")
        guard type == "users" else {
            throw InputError(.invalidValue, at: pointer / "target_type", expected: "\"users\" (a push task sends a one-to-one message to each receiver)", found: "\"\(type)\"")
        }
        var object = r.object
        object["id"] = .string(id)
        object["target"] = [.string(receiver)]
        return .object(object)
    }

    public func message(_ json: JSONValue, at pointer: JSONPointer, context: MessageContext) throws -> PushMessage {
        let r = try FieldReader(json, at: pointer, what: "a REST message body")
        try r.allowOnly(["id", "target_type", "target", "msg", "from", "ext"], context: "an easemob-legacy message")
        let id = try r.identifier("id", expected: "the message id as a string")
        let targetType = try r.string("target_type", expected: "\"users\" or \"chatgroups\"")
        let targets = try r.identifierArray("target", expected: "a non-empty array of user or group ids", allowEmpty: false)
        if let from = try r.optionalIdentifier("from", expected: "the sender's user id", allowEmpty: true), from != context.sender {
            throw InputError(.invalidValue, at: pointer / "from", expected: "the scenario's sender \"\(context.sender)\"", found: "\"\(from)\"")
        }
        let kind: ChatKind
        var groupId: String? = nil
        switch targetType {
        case "users":
            kind = .oneToOne
            guard targets.contains(context.receiver) else {
                throw InputError(.invalidValue, at: pointer / "target", expected: "a target list that includes the receiver \"\(context.receiver)\"",
                    found: JSONValue.array(targets.map(JSONValue.string)).compactText)
            }
        case "chatgroups":
            kind = .group
            groupId = targets[0]
        default:
            throw InputError(.invalidValue, at: pointer / "target_type", expected: "\"users\" or \"chatgroups\"", found: "\"\(targetType)\"")
        }
        let body = try r.object("msg", expected: "the message body {\"type\", \"msg\"}")
        let typeExpected = "one of " + Self.messageTypes.keys.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        let type = try body.string("type", expected: typeExpected)
        guard let shape = Self.messageTypes[type] else {
            throw InputError(.invalidValue, at: body.pointer / "type", expected: typeExpected, found: "\"\(type)\"")
        }
        try body.allowOnly(shape.allowed, context: "a \(type) message body")
        var message = PushMessage(id: id, sender: context.sender, kind: kind, groupId: groupId, content: [try shape.part(body)])
        if let ext = r.value("ext") { try self.ext.apply(ext, at: pointer / "ext", to: &message) }
        return message
    }
}
