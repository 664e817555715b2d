import PushBridgeCore
import PushBridgeJSON

extension EasemobLegacyAdapter {
    public func writeSetup(of state: UserState, into output: inout TranslationOutput) {
        Self.writeCommonSetup(of: state, dialect: id, registerCall: "bindDeviceToken", defaults: newUser(state.user, timeZone: state.timeZone), into: &output)
        let user = state.user
        if let window = state.app.window {
            let hours = window.wholeHours
            output.call(user, "disableOfflinePushStart", [("start", .int(Int64(hours.start))), ("end", .int(Int64(hours.end)))])
            if DoNotDisturbWindow(startMinute: hours.start * 60, endMinute: hours.end * 60) != window.normalized {
                output.lose(.appWindow, user: user,
                    "easemob-legacy windows are whole hours: \(window.clockText) widened outward to \(hours.start)–\(hours.end)")
            }
        }
        switch state.app.remindType {
        case nil, .all?: break
        case .mentionOnly?:
            output.lose(.appRemindType, user: user, "easemob-legacy has no app remind type: MentionOnly has no equivalent (every message would be pushed)")
        case .none?:
            output.lose(.appRemindType, user: user,
                "easemob-legacy cannot turn push off for the app (remind type None); the nearest, disableOfflinePushStart 0 24, suppresses as do-not-disturb and yields to em_force_notification differently")
        }
        if let period = state.app.silentPeriod, period.until > output.now {
            output.lose(.appSilentPeriod, user: user, "easemob-legacy has no do-not-disturb duration, only daily whole-hour windows")
        }
        let muted = state.conversations.keys.filter { $0.kind == .group && state.conversations[$0]?.remindType == RemindType.none }.map(\.id).sorted()
        if !muted.isEmpty {
            output.call(user, "updatePushServiceForGroups", [("groupIds", .array(muted.map(JSONValue.string))), ("disablePush", .bool(true))])
        }
        output.loseConversations(of: state, dialect: id) { key, remind in key.kind == .group && remind == RemindType.none }
        if let language = state.language {
            output.lose(.language, user: user, "easemob-legacy has no preferred notification language (\"\(language)\")")
        }
    }

    /// Device, display name, display style; sounds and name cards reported lost (both Easemob dialects).
    static func writeCommonSetup(of state: UserState, dialect: String, registerCall: String, defaults: UserState, into output: inout TranslationOutput) {
        let user = state.user
        // Oldest binding first, so that the newest ends up first again; initializeSDK before each
        // token whose certificate differs from the one bound last.
        var bound: Certificate?
        for device in state.devices.reversed() {
            guard let name = device.certificate.name else {
                output.lose(.deviceCertificate, user: user,
                    "certificate busiId \(device.certificate.busiId ?? "?") has no apnsCertName: give it a \"name\" in app.certificates; the device \(device.token) is not registered",
                    alsoChanges: [.deviceToken])
                continue
            }
            if bound != device.certificate {
                output.call(user, "initializeSDK", [("appkey", .string(output.appkey)), ("apnsCertName", .string(name))])
                bound = device.certificate
            }
            output.call(user, registerCall, [("deviceToken", .string(device.token))])
        }
        if let certificate = state.boundCertificate, certificate != bound, let name = certificate.name {
            output.call(user, "initializeSDK", [("appkey", .string(output.appkey)), ("apnsCertName", .string(name))])
        }
        if var name = state.displayName {
            if name.count > maximumDisplayNameLength {
                name = String(name.prefix(maximumDisplayNameLength))
                output.lose(.displayName, user: user, "\(dialect) display names are at most \(maximumDisplayNameLength) characters; shortened")
            }
            output.call(user, "updatePushDisplayName", [("displayName", .string(name))])
        }
        if state.displayStyle != defaults.displayStyle {
            output.call(user, "updatePushDisplayStyle", [("style", .string(state.displayStyle.rawValue))])
        }
        if state.oneToOneSound != nil {
            output.lose(.oneToOneSound, user: user, "\(dialect) has no default sound per receiver; a message sets its own (em_push_sound)")
        }
        if state.groupSound != nil {
            output.lose(.groupSound, user: user, "\(dialect) has no default sound per receiver; a message sets its own (em_push_sound)")
        }
        for group in state.nameCards.keys.sorted() {
            output.lose(.nameCards, user: user, key: group, "\(dialect) has no group name cards (the Easemob profiles always show the display name)")
        }
    }

    /// The REST message types by content part (the inverse of ``messageTypes``).
    static func restType(of part: ContentPart) -> String? {
        switch part {
        case .text: return "txt"
        case .image: return "img"
        case .audio: return "audio"
        case .video: return "video"
        case .file: return "file"
        case .location: return "loc"
        case .command: return "cmd"
        case .face, .custom: return nil
        }
    }

    public func writeMessage(_ message: PushMessage, into output: inout TranslationOutput) -> JSONValue {
        let part = EasemobExtension.singlePart(of: message, dialect: id, into: &output) { Self.restType(of: $0) != nil }
        var body = JSONObject([("type", .string(Self.restType(of: part)!))])
        if case .text(let text) = part { body["msg"] = .string(text) }
        if case .command(let action) = part { body["action"] = .string(action) }
        var o = JSONObject([
            ("id", .string(message.id)),
            ("target_type", .string(message.kind == .group ? "chatgroups" : "users")),
            ("target", [.string(message.kind == .group ? message.groupId ?? "" : output.receiver)]),
            ("from", .string(message.sender)),
            ("msg", .object(body)),
        ])
        if let ext = ext.write(message, dialect: id, into: &output) { o["ext"] = .object(ext) }
        if !message.translations.isEmpty {
            output.lose(.messageTranslations, "easemob-legacy messages carry no translations")
        }
        return .object(o)
    }
}
