import PushBridgeCore
import PushBridgeJSON

extension AgoraSilentAdapter {
    public func writeSetup(of state: UserState, into output: inout TranslationOutput) {
        let user = state.user
        EasemobLegacyAdapter.writeCommonSetup(
            of: state, dialect: id, registerCall: "registerForRemoteNotificationsWithDeviceToken", defaults: newUser(user, timeZone: state.timeZone),
            into: &output)
        var all: [(String, JSONValue)] = []
        if let remind = state.app.remindType { all.append(("remindType", .string(remind.rawValue))) }
        if let window = state.app.window {
            all.append(("silentModeStartTime", .string(DoNotDisturbWindow.clockText(window.startMinute))))
            all.append(("silentModeEndTime", .string(DoNotDisturbWindow.clockText(window.normalized.endMinute))))
        }
        if !all.isEmpty { output.call(user, "setSilentModeForAll", all) }
        if let period = state.app.silentPeriod, period.until > output.now {
            output.call(user, "setSilentModeForAll", [("silentModeDuration", .int(Self.minutes(period)))], at: period.start)
        }
        for (key, settings) in state.conversations.sorted(by: { $0.key.description < $1.key.description }) {
            let conversation: [(String, JSONValue)] = [("conversationId", .string(key.id)), ("conversationType", .string(key.kind.rawValue))]
            if let remind = settings.remindType {
                output.call(user, "setSilentModeForConversation", conversation + [("remindType", .string(remind.rawValue))])
            }
            if let period = settings.silentPeriod, period.until > output.now {
                output.call(user, "setSilentModeForConversation", conversation + [("silentModeDuration", .int(Self.minutes(period)))], at: period.start)
            }
        }
        if let language = state.language {
            output.call(user, "setPreferredNotificationLanguage", [("languageCode", .string(language))])
        }
    }

    /// A duration's length in whole minutes (durations are only ever made from minutes).
    static func minutes(_ period: SilentPeriod) -> Int64 {
        (period.until.milliseconds - period.start.milliseconds) / 60_000
    }

    /// The SDK body type of a content part.
    static func bodyType(of part: ContentPart) -> String? {
        switch part {
        case .text: return "text"
        case .image: return "image"
        case .audio: return "voice"
        case .video: return "video"
        case .file: return "file"
        case .location: return "location"
        case .custom: return "custom"
        case .command: return "cmd"
        case .face: return nil
        }
    }

    public func writeMessage(_ message: PushMessage, into output: inout TranslationOutput) -> JSONValue {
        let part = EasemobExtension.singlePart(of: message, dialect: id, into: &output) { Self.bodyType(of: $0) != nil }
        var body = JSONObject([("type", .string(Self.bodyType(of: part)!))])
        switch part {
        case .text(let text): body["text"] = .string(text)
        case .custom(let description) where !description.isEmpty: body["text"] = .string(description)
        case .command(let action): body["action"] = .string(action)
        default: break
        }
        let to = message.kind == .group ? message.groupId ?? "" : output.receiver
        var o = JSONObject([
            ("id", .string(message.id)), ("conversationId", .string(to)), ("from", .string(message.sender)), ("to", .string(to)),
            ("chatType", .string(message.kind.rawValue)), ("body", .object(body)),
        ])
        if let ext = ext.write(message, dialect: id, into: &output) { o["ext"] = .object(ext) }
        if !message.translations.isEmpty {
            o["translations"] = .object(JSONObject(message.translations.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }))
        }
        return .object(o)
    }
}
