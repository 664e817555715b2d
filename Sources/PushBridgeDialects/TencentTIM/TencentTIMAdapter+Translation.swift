import PushBridgeCore
import PushBridgeJSON

extension TencentTIMAdapter {
    public func writeSetup(of state: UserState, into output: inout TranslationOutput) {
        let user = state.user
        for device in state.devices.reversed() {  // oldest binding first: the newest ends up first again
            if let busiId = device.certificate.busiId {
                let id: JSONValue = Int64(busiId).map(JSONValue.int) ?? .string(busiId)
                output.call(user, "setToken", [("busiId", id), ("token", .string(device.token))])
            } else {
                output.lose(.deviceCertificate, user: user,
                    "certificate \(device.certificate.name ?? "?") has no busiId: give it a \"busiId\" in app.certificates; the device \(device.token) is not registered",
                    alsoChanges: [.deviceToken])
            }
        }
        if let nick = state.displayName { output.call(user, "modifySelfProfile", [("nick", .string(nick))]) }
        if state.displayStyle == .simpleBanner {
            output.lose(.displayStyle, user: user, "tencent-tim always shows content (MessageSummary); SimpleBanner has no equivalent")
        }
        var apns: [(String, JSONValue)] = []
        switch state.app.remindType {
        case nil, .all?: break
        case .none?: apns.append(("openPush", 2))
        case .mentionOnly?: output.lose(.appRemindType, user: user, "tencent-tim push is on or off: MentionOnly has no equivalent")
        }
        if let sound = state.oneToOneSound { apns.append(("c2cSound", .string(sound))) }
        if let sound = state.groupSound { apns.append(("groupSound", .string(sound))) }
        if !apns.isEmpty {
            if apns[0].0 != "openPush" { apns.insert(("openPush", 0), at: 0) }
            output.call(user, "setAPNS", apns)
        }
        if state.app.window != nil {
            output.lose(.appWindow, user: user, "tencent-tim has no do-not-disturb window")
        }
        if let period = state.app.silentPeriod, period.until > output.now {
            output.lose(.appSilentPeriod, user: user, "tencent-tim has no do-not-disturb duration")
        }
        output.loseConversations(of: state, dialect: id)
        if let language = state.language {
            output.lose(.language, user: user, "tencent-tim has no preferred notification language (\"\(language)\")")
        }
        for (group, card) in state.nameCards.sorted(by: { $0.key < $1.key }) {
            output.call(user, "modifyGroupMemberInfoSetNameCard", [("groupId", .string(group)), ("user", .string(user)), ("nameCard", .string(card))])
        }
    }

    /// The element a content part becomes.
    static func element(of part: ContentPart, into output: inout TranslationOutput) -> JSONValue {
        switch part {
        case .text(let text): return ["type": "Text", "text": .string(text)]
        case .image: return ["type": "Image"]
        case .audio: return ["type": "Sound"]
        case .file: return ["type": "File"]
        case .location: return ["type": "Location"]
        case .face: return ["type": "Face"]
        case .custom(let description):
            return description.isEmpty ? ["type": "Custom"] : ["type": "Custom", "desc": .string(description)]
        case .video: return ["type": "Video"]
        case .command(let action):
            output.lose(.messageContent, "tencent-tim has no command message; the cmd \(JSONValue.string(action).compactText) becomes a Custom element with no description")
            return ["type": "Custom", "data": .string(action)]
        }
    }

    public func writeMessage(_ message: PushMessage, into output: inout TranslationOutput) -> JSONValue {
        var conversation = JSONObject([
            ("type", .string(message.kind == .group ? "Group" : "C2C")),
            ("id", .string(message.kind == .group ? message.groupId ?? "" : output.receiver)),
        ])
        if let name = message.groupName { conversation["groupName"] = .string(name) }
        var o = JSONObject([
            ("id", .string(message.id)), ("conversation", .object(conversation)), ("sender", .string(message.sender)),
            ("elems", .array(message.content.map { Self.element(of: $0, into: &output) })),
        ])

        var info = JSONObject()
        var desc = message.contentOverride
        if let body = message.alertBody ?? message.pushContent {
            let source = message.alertBody != nil ? "em_alert_body" : "em_push_content"
            output.lose(message.alertBody != nil ? .messageAlertBody : .messagePushContent,
                desc == nil
                    ? "tencent-tim has no whole-body override: \(source) written as offlinePushInfo.desc, which keeps the name prefix"
                    : "tencent-tim has no whole-body override (\(source)); offlinePushInfo.desc already holds the content override",
                alsoChanges: desc == nil ? [.messageContentOverride] : [])
            if message.alertBody != nil && message.pushContent != nil {
                output.lose(.messagePushContent, "tencent-tim has no whole-body override (em_push_content)")
            }
            if desc == nil { desc = body }
        }
        if let desc { info["desc"] = .string(desc) }
        switch message.extensionValue {
        case .string(let text)?: info["ext"] = .string(text)
        case let value?:
            info["ext"] = .string(value.compactText)
            output.lose(.messageExtension,
                "tencent-tim ext is a string: \(value.typeName) written as compact JSON (the Easemob profiles' e becomes that string)")
        case nil: break
        }
        if message.ignore { info["pushFlag"] = 1 }
        if let title = message.pushTitle { info["title"] = .string(title) }
        var ios = JSONObject()
        switch message.sound {
        case .named(let name)?: ios["sound"] = .string(name)
        case .silent?: ios["sound"] = .string(PayloadRenderer.noSound)
        case nil: break
        }
        if message.ignoreBadge { ios["ignoreBadge"] = true }
        if let title = message.alertTitle { ios["title"] = .string(title) }
        if let subtitle = message.alertSubtitle { ios["subtitle"] = .string(subtitle) }
        if message.mutableContent { ios["mutableContent"] = true }
        if !ios.isEmpty { info["iosConfig"] = .object(ios) }
        if let android = message.androidOptions { info["androidConfig"] = android }
        if !info.isEmpty { o["offlinePushInfo"] = .object(info) }

        let unsupported: [(CanonicalField, Bool, String)] = [
            (.messageTemplate, message.template != nil, "push templates"),
            (.messageLocalization, message.localization != LocalizationKeys(), "loc keys"),
            (.messageCategory, message.category != nil, "a category"),
            (.messageBadgeOverride, message.badgeOverride != nil, "a badge value override (em_push_badge)"),
            (.messageTranslations, !message.translations.isEmpty, "translations"),
            (.messageForce, message.force, "forced push (em_force_notification)"),
            (.messageMentions, message.mentions != .nobody, "mentions (em_at_list)"),
        ]
        for (field, present, what) in unsupported where present {
            output.lose(field, "tencent-tim offline push info has no \(what)")
        }
        return .object(o)
    }
}
