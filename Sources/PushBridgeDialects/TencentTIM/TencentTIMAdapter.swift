import Foundation
import PushBridgeCore
import PushBridgeJSON

/// The Tencent Cloud IM legacy TIM dialect (seed 004): `busiId` tokens, `TIMAPNSConfig`,
/// `doBackground` badge bases, nicknames and name cards, element push text, `TIMOfflinePushInfo`.
public struct TencentTIMAdapter: DialectAdapter {
    public let id = "tencent-tim"
    public let profile = Profile.tencentTIM
    public let settingCalls = [
        "setToken", "setAPNS", "doBackground", "doForeground", "modifySelfProfile", "modifyGroupMemberInfoSetNameCard",
    ]
    public let queryCalls = ["getAPNSConfig"]
    /// The largest unread count `doBackground` accepts.
    public static let maximumUnread: Int64 = 99_999

    public init() {}

    /// Element types and the keys each may carry.
    static let elementKeys: [String: [String]] = [
        "Text": ["type", "text"], "Image": ["type"], "Sound": ["type"], "File": ["type"], "Location": ["type", "desc"],
        "Face": ["type", "data"], "Custom": ["type", "data", "desc"], "Video": ["type"],
    ]

    public var messageFields: [String] {
        [
            "id", "sender", "conversation.type", "conversation.id", "conversation.groupName", "receiverList", "elems.type", "elems.text",
            "elems.desc", "elems.data", "offlinePushInfo.desc", "offlinePushInfo.title", "offlinePushInfo.ext", "offlinePushInfo.pushFlag",
            "offlinePushInfo.iosConfig.sound", "offlinePushInfo.iosConfig.ignoreBadge", "offlinePushInfo.iosConfig.title",
            "offlinePushInfo.iosConfig.subtitle", "offlinePushInfo.iosConfig.image", "offlinePushInfo.iosConfig.mutableContent",
            "offlinePushInfo.androidConfig",
        ]
    }

    /// Tencent always shows content and has no background grace: after `doBackground` the receiver is offline.
    public func newUser(_ user: UserID, timeZone: TimeZone) -> UserState {
        UserState(user: user, displayStyle: .messageSummary, backgroundGraceSeconds: 0, timeZone: timeZone)
    }

    public func apply(_ call: JSONValue, at pointer: JSONPointer, to world: inout PushWorld, context: CallContext) throws {
        let name = try callName(of: call, at: pointer, allowQueries: false)
        let r = try FieldReader(call, at: pointer)
        var target = context.caller
        var user = user(context.caller, in: world)
        switch name {
        case "setToken":
            try r.allowOnly(["call", "busiId", "token"], context: name)
            let busiId = try Self.busiId(r)
            let token = try r.hexToken("token")
            guard let certificate = world.app.certificate(busiId: busiId) else {
                throw InputError(.unknownReference, at: pointer / "busiId",
                    expected: "a certificate id listed in app.certificates (" + world.app.certificates.compactMap(\.busiId).joined(separator: ", ") + ")",
                    found: busiId)
            }
            world.bind(Device(token: token, certificate: certificate, boundAt: context.at), to: &user)
        case "setAPNS":
            try r.allowOnly(["call", "openPush", "c2cSound", "groupSound"], context: name)
            let openPush = try r.int("openPush", in: 0...2, expected: "openPush 0 (unchanged), 1 (on) or 2 (off)")
            let c2c = try r.nullableString("c2cSound", expected: "a sound file name or null")
            let group = try r.nullableString("groupSound", expected: "a sound file name or null")
            switch openPush {
            case 1: user.app.remindType = .all
            case 2: user.app.remindType = RemindType.none
            default: break
            }
            Self.assign(c2c, to: &user.oneToOneSound)
            Self.assign(group, to: &user.groupSound)
        case "doBackground":
            try r.allowOnly(["call", "c2cUnread", "groupUnread"], context: name)
            let c2c = try r.int("c2cUnread", in: 0...Self.maximumUnread, expected: "the one-to-one unread count 0–\(Self.maximumUnread)")
            let group = try r.optionalInt("groupUnread", in: 0...Self.maximumUnread, expected: "the group unread count 0–\(Self.maximumUnread)") ?? 0
            user.presence = .offline
            user.badge = c2c + group
        case "doForeground":
            try r.allowOnly(["call"], context: name)
            user.setPresence(.online)  // resets the badge counter (Specification §10)
        case "modifySelfProfile":
            try r.allowOnly(["call", "nick"], context: name)
            user.displayName = try r.string("nick", expected: "the nickname as a string")
        case "modifyGroupMemberInfoSetNameCard":
            try r.allowOnly(["call", "groupId", "user", "nameCard"], context: name)
            let group = try r.identifier("groupId", expected: "the group id")
            target = try r.identifier("user", expected: "the member whose name card is set")
            let card = try r.string("nameCard", expected: "the name card as a string")
            user = self.user(target, in: world)
            user.nameCards[group] = card.isEmpty ? nil : card
        default:
            throw InputError(.unknownCall, at: pointer / "call", expected: "a setting call", found: "\"\(name)\"")
        }
        world.users[target] = user
    }

    /// `busiId` as an integer or a string of digits.
    static func busiId(_ r: FieldReader) throws -> String {
        let expected = "the certificate id (busiId) as a non-negative integer"
        guard let value = r.value("busiId") else {
            throw InputError(.missingKey, at: r.pointer / "busiId", expected: expected)
        }
        switch value {
        case .int(let n) where n >= 0 && n <= Int64(UInt32.max): return String(n)
        case .string(let s) where !s.isEmpty && s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }): return s
        default: throw InputError(.wrongType, at: r.pointer / "busiId", expected: expected, found: value.briefDescription)
        }
    }

    /// Absent leaves a sound unchanged; `null` or an empty name clears it.
    static func assign(_ value: Nullable<String>, to sound: inout String?) {
        switch value {
        case .absent: break
        case .null: sound = nil
        case .value(let name): sound = name.isEmpty ? nil : name
        }
    }

    public func query(_ call: JSONValue, at pointer: JSONPointer, in world: PushWorld, context: CallContext) throws -> JSONValue {
        let name = try callName(of: call, at: pointer)
        let r = try FieldReader(call, at: pointer)
        let user = user(context.caller, in: world)
        switch name {
        case "getAPNSConfig":
            try r.allowOnly(["call"], context: name)
            return .object(
                JSONObject([
                    ("openPush", .int(user.app.remindType == RemindType.none ? 2 : 1)),
                    ("c2cSound", user.oneToOneSound.map(JSONValue.string) ?? .null),
                    ("groupSound", user.groupSound.map(JSONValue.string) ?? .null),
                ]))
        default:
            throw InputError(.unknownCall, at: pointer / "call", expected: "a query call: " + queryCalls.joined(separator: ", "), found: "\"\(name)\"")
        }
    }

    public func address(of json: JSONValue, at pointer: JSONPointer) throws -> MessageAddress {
        let r = try FieldReader(json, at: pointer, what: "a TIM message")
        let sender = try r.optionalIdentifier("sender", expected: "the sender's user id", allowEmpty: true)
        let conversation = try r.object("conversation", expected: "the conversation {\"type\": \"C2C\" or \"Group\", \"id\", \"groupName\"}")
        let id = try conversation.identifier("id", expected: "the conversation id")
        switch try conversation.string("type", expected: "\"C2C\" or \"Group\"") {
        case "C2C": return MessageAddress(sender: sender, audience: .users([id]))
        case "Group": return MessageAddress(sender: sender, audience: .group(id), only: try Self.receiverList(r))
        case let other: throw InputError(.invalidValue, at: conversation.pointer / "type", expected: "\"C2C\" or \"Group\"", found: "\"\(other)\"")
        }
    }

    public func readdressed(_ json: JSONValue, at pointer: JSONPointer, to receiver: UserID, id: String) throws -> JSONValue {
        let r = try FieldReader(json, at: pointer, what: "a TIM message")
        let conversation = try r.object("conversation", expected: "the conversation {\"type\": \"C2C\", \"id\"}")
        let type = try conversation.string("type", expected: "\"C2C\" (a push task sends a one-to-one message to each receiver)")
        guard type == "C2C" else {
            throw InputError(.invalidValue, at: conversation.pointer / "type", expected: "\"C2C\" (a push task sends a one-to-one message to each receiver)", found: "\"\(type)\"")
        }
        var addressed = conversation.object
        addressed["id"] = .string(receiver)
        var object = r.object
        object["id"] = .string(id)
        object["conversation"] = .object(addressed)
        return .object(object)
    }

    /// The most receivers a targeted group message names (REST `To_Account`).
    public static let maximumTargetedReceivers = 50

    /// A targeted group message's `receiverList` (`createTargetedGroupMessage`): 1–50 distinct members.
    static func receiverList(_ r: FieldReader) throws -> [UserID]? {
        guard r.has("receiverList") else { return nil }
        let expected = "receiverList, an array of 1–\(maximumTargetedReceivers) distinct member ids"
        let list = try r.identifierArray("receiverList", expected: expected, allowEmpty: false)
        guard list.count <= maximumTargetedReceivers else {
            throw InputError(.outOfRange, at: r.pointer / "receiverList", expected: expected, found: "\(list.count) ids")
        }
        var seen = Set<UserID>()
        for (i, id) in list.enumerated() where !seen.insert(id).inserted {
            throw InputError(.invalidValue, at: r.pointer / "receiverList" / i, expected: "each member once", found: "\"\(id)\" again")
        }
        return list
    }

    public func message(_ json: JSONValue, at pointer: JSONPointer, context: MessageContext) throws -> PushMessage {
        let r = try FieldReader(json, at: pointer, what: "a TIM message")
        try r.allowOnly(["id", "conversation", "sender", "elems", "offlinePushInfo", "receiverList"], context: "a tencent-tim message")
        let id = try r.identifier("id", expected: "the message id as a string")
        if let sender = try r.optionalIdentifier("sender", expected: "the sender's user id", allowEmpty: true), sender != context.sender {
            throw InputError(.invalidValue, at: pointer / "sender", expected: "the scenario's sender \"\(context.sender)\"", found: "\"\(sender)\"")
        }
        let conversation = try r.object("conversation", expected: "the conversation {\"type\": \"C2C\" or \"Group\", \"id\", \"groupName\"}")
        try conversation.allowOnly(["type", "id", "groupName"], context: "a conversation")
        let type = try conversation.string("type", expected: "\"C2C\" or \"Group\"")
        let conversationId = try conversation.identifier("id", expected: "the conversation id")
        var message: PushMessage
        switch type {
        case "C2C":
            guard conversationId == context.receiver else {
                throw InputError(.invalidValue, at: conversation.pointer / "id",
                    expected: "the receiver \"\(context.receiver)\" (a C2C conversation is the sender's peer)", found: "\"\(conversationId)\"")
            }
            if conversation.has("groupName") {
                throw InputError(.unknownKey, at: conversation.pointer / "groupName", expected: "groupName only in Group conversations")
            }
            if r.has("receiverList") { throw InputError(.unknownKey, at: pointer / "receiverList", expected: "receiverList only in Group conversations") }
            message = PushMessage(id: id, sender: context.sender, kind: .oneToOne, content: [])
        case "Group":
            message = PushMessage(id: id, sender: context.sender, kind: .group, groupId: conversationId, content: [])
            message.groupName = try conversation.optionalString("groupName")
            if let list = try Self.receiverList(r) {
                // A scenario decides for one receiver: it must be one of the targeted members.
                if context.receiver != conversationId && !list.contains(context.receiver) {
                    throw InputError(.invalidValue, at: pointer / "receiverList", expected: "a receiver list that includes the receiver \"\(context.receiver)\"",
                        found: JSONValue.array(list.map(JSONValue.string)).compactText)
                }
                // Not counted as unread (Tencent: a targeted message is excluded from unread counts).
                message.ignoreBadge = true
            }
        default:
            throw InputError(.invalidValue, at: conversation.pointer / "type", expected: "\"C2C\" or \"Group\"", found: "\"\(type)\"")
        }
        let elements = try r.array("elems", expected: "a non-empty array of elements")
        if elements.isEmpty {
            throw InputError(.invalidValue, at: pointer / "elems", expected: "a non-empty array of elements", found: "an empty array")
        }
        message.content = try elements.enumerated().map { index, value in try Self.part(value, at: pointer / "elems" / index) }

        if let info = try r.optionalObject("offlinePushInfo", expected: "TIMOfflinePushInfo {\"desc\", \"ext\", \"pushFlag\", \"iosConfig\"}") {
            try info.allowOnly(["desc", "title", "ext", "pushFlag", "iosConfig", "androidConfig"], context: "offlinePushInfo")
            if let desc = try info.optionalString("desc"), !desc.isEmpty { message.contentOverride = desc }
            // V2TIMOfflinePushInfo.title / REST OfflinePushInfo.Title: the push title (an empty one is none).
            if let title = try info.optionalString("title"), !title.isEmpty { message.pushTitle = title }
            // An empty ext is no extension in every profile (Specification §10).
            if let ext = try info.optionalString("ext"), !ext.isEmpty { message.extensionValue = .string(ext) }
            // Android options: accepted and carried, no effect on APNs (Specification §10).
            if let android = try info.optionalObject("androidConfig", expected: "TIMAndroidOfflinePushConfig, an object") {
                message.androidOptions = .object(android.object)
            }
            message.ignore = try info.optionalInt("pushFlag", in: 0...1, expected: "pushFlag 0 (push) or 1 (no push)") == 1
            if let ios = try info.optionalObject(
                "iosConfig", expected: "TIMIOSOfflinePushConfig {\"sound\", \"ignoreBadge\", \"title\", \"subtitle\", \"image\", \"mutableContent\"}")
            {
                try ios.allowOnly(["sound", "ignoreBadge", "title", "subtitle", "image", "mutableContent"], context: "iosConfig")
                if let sound = try ios.optionalString("sound"), !sound.isEmpty { message.sound = SoundChoice(sound) }
                message.ignoreBadge = try ios.optionalBool("ignoreBadge") ?? false
                // REST ApnsInfo.Title replaces the top-level title; SubTitle is the alert's subtitle (empty: none).
                if let title = try ios.optionalString("title"), !title.isEmpty { message.alertTitle = title }
                if let subtitle = try ios.optionalString("subtitle"), !subtitle.isEmpty { message.alertSubtitle = subtitle }
                // ApnsInfo.Image: accepted; no stored source shows the payload key Tencent writes it to (the Rulings article).
                _ = try ios.optionalString("image", expected: "an image URL")
                message.mutableContent = try ios.optionalBool("mutableContent") ?? false
            }
        }
        return message
    }

    /// One element → its content part.
    static func part(_ value: JSONValue, at pointer: JSONPointer) throws -> ContentPart {
        let e = try FieldReader(value, at: pointer, what: "an element {\"type\", …}")
        let expected = "an element type: " + ["Text", "Image", "Sound", "Video", "File", "Location", "Face", "Custom"].joined(separator: ", ")
        let type = try e.string("type", expected: expected)
        guard let keys = elementKeys[type] else {
            throw InputError(.invalidValue, at: pointer / "type", expected: expected, found: "\"\(type)\"")
        }
        try e.allowOnly(keys, context: "a \(type) element")
        switch type {
        case "Text": return .text(try e.string("text", expected: "the text of the element"))
        case "Image": return .image
        case "Sound": return .audio
        case "Video": return .video
        case "File": return .file
        case "Location":
            _ = try e.optionalString("desc")
            return .location
        case "Face":
            _ = try e.optionalString("data")
            return .face
        default:
            _ = try e.optionalString("data")
            return .custom(description: try e.optionalString("desc") ?? "")
        }
    }
}
