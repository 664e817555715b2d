/// The fields of the canonical model: what `Mappings/*.json` map dialect inputs onto, what the
/// compatibility matrix has as rows, and what translation losses and canonical differences name.
public enum CanonicalField: String, Hashable, Sendable, CaseIterable, Comparable {
    case deviceToken = "user.device.token"
    case deviceCertificate = "user.device.certificate"
    case presence = "user.presence"
    case badge = "user.badge"
    case appRemindType = "user.app.remindType"
    case appWindow = "user.app.window"
    case appSilentPeriod = "user.app.silentPeriod"
    case conversationRemindType = "user.conversation.remindType"
    case conversationSilentPeriod = "user.conversation.silentPeriod"
    case displayStyle = "user.displayStyle"
    case displayName = "user.displayName"
    case language = "user.language"
    case oneToOneSound = "user.oneToOneSound"
    case groupSound = "user.groupSound"
    case nameCards = "user.nameCards"
    case messageID = "message.id"
    case messageSender = "message.sender"
    case messageKind = "message.kind"
    case messageGroupID = "message.groupId"
    case messageGroupName = "message.groupName"
    case messageContent = "message.content"
    case messageTranslations = "message.translations"
    case messageContentOverride = "message.contentOverride"
    case messagePushContent = "message.pushContent"
    case messageAlertBody = "message.alertBody"
    case messagePushTitle = "message.pushTitle"
    case messageAlertTitle = "message.alertTitle"
    case messageAlertSubtitle = "message.alertSubtitle"
    case messageTemplate = "message.template"
    case messageLocalization = "message.localization"
    case messageCategory = "message.category"
    case messageMutableContent = "message.mutableContent"
    case messageBadgeOverride = "message.badgeOverride"
    case messageIgnoreBadge = "message.ignoreBadge"
    case messageSound = "message.sound"
    case messageExtension = "message.extension"
    case messageIgnore = "message.ignore"
    case messageForce = "message.force"
    case messageMentions = "message.mentions"
    case messageAndroidOptions = "message.androidOptions"

    /// What the field holds, for the matrix.
    public var summary: String {
        switch self {
        case .deviceToken: return "device token (hex, lower case)"
        case .deviceCertificate: return "certificate the token is registered under (apns-topic, environment)"
        case .presence: return "online / background / offline"
        case .badge: return "badge counter"
        case .appRemindType: return "app remind type All / MentionOnly / None"
        case .appWindow: return "daily do-not-disturb window (minutes, local time)"
        case .appSilentPeriod: return "app do-not-disturb duration"
        case .conversationRemindType: return "conversation remind type"
        case .conversationSilentPeriod: return "conversation do-not-disturb duration"
        case .displayStyle: return "SimpleBanner / MessageSummary"
        case .displayName: return "sender's push display name (nick)"
        case .language: return "preferred notification language"
        case .oneToOneSound: return "default sound, one-to-one"
        case .groupSound: return "default sound, groups"
        case .nameCards: return "sender's name card per group"
        case .messageID: return "message id (m)"
        case .messageSender: return "sender (f)"
        case .messageKind: return "one-to-one or group"
        case .messageGroupID: return "group id (g)"
        case .messageGroupName: return "group name in the body"
        case .messageContent: return "content parts (text, [image], …)"
        case .messageTranslations: return "content translations"
        case .messageContentOverride: return "content override keeping the name prefix"
        case .messagePushContent: return "whole-body override (weakest)"
        case .messageAlertBody: return "whole-body override"
        case .messagePushTitle: return "title (weakest)"
        case .messageAlertTitle: return "title"
        case .messageAlertSubtitle: return "subtitle"
        case .messageTemplate: return "push template and its arguments"
        case .messageLocalization: return "loc keys and arguments"
        case .messageCategory: return "category"
        case .messageMutableContent: return "mutable-content"
        case .messageBadgeOverride: return "badge value override"
        case .messageIgnoreBadge: return "no badge, not counted"
        case .messageSound: return "sound of this message"
        case .messageExtension: return "custom extension (e / ext)"
        case .messageIgnore: return "do not push"
        case .messageForce: return "push through do-not-disturb and mutes"
        case .messageMentions: return "mentioned users (em_at_list)"
        case .messageAndroidOptions: return "Android push options: carried, no effect on APNs"
        }
    }

    public static func < (lhs: CanonicalField, rhs: CanonicalField) -> Bool {
        allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
    }
}

/// One canonical field whose value differs between two states or two messages.
public struct CanonicalDifference: Hashable, Sendable, CustomStringConvertible {
    public var field: CanonicalField
    /// The entry within the field, when it is keyed (a conversation, a group's name card).
    public var key: String?
    public var left: String
    public var right: String

    public init(_ field: CanonicalField, key: String? = nil, left: String, right: String) {
        self.field = field
        self.key = key
        self.left = left
        self.right = right
    }

    public var description: String {
        field.rawValue + (key.map { "[\($0)]" } ?? "") + ": " + left + " ≠ " + right
    }
}
