import PushBridgeJSON

/// One piece of a message's content, in order.
public enum ContentPart: Hashable, Sendable {
    case text(String)
    case image
    case audio
    case video
    case file
    case location
    case face
    /// A custom element or body, shown as its description (may be empty).
    case custom(description: String)

    /// The text this part contributes to a push body.
    public var pushText: String {
        switch self {
        case .text(let s): return s
        case .image: return "[image]"
        case .audio: return "[audio]"
        case .video: return "[video]"
        case .file: return "[file]"
        case .location: return "[location]"
        case .face: return "[face]"
        case .custom(let d): return d
        }
    }
}

/// Who a message mentions (`em_at_list`).
public enum Mentions: Hashable, Sendable {
    case nobody
    case everyone
    case users([UserID])

    public func includes(_ user: UserID) -> Bool {
        switch self {
        case .nobody: return false
        case .everyone: return true
        case .users(let ids): return ids.contains(user)
        }
    }
}

/// A sound choice carried by a message.
public enum SoundChoice: Hashable, Sendable {
    /// Play this file (or `default`).
    case named(String)
    /// No sound: the `sound` key is omitted.
    case silent

    /// A sound file name as a dialect writes it; `push.no_sound` (Tencent `kIOSOfflinePushNoSound`) means no sound.
    public init(_ name: String) {
        self = name == PayloadRenderer.noSound ? .silent : .named(name)
    }
}

/// A reference to a push template with its arguments.
public struct TemplateReference: Hashable, Sendable {
    public var name: String
    public var titleArgs: [String]
    public var contentArgs: [String]
    public init(name: String, titleArgs: [String], contentArgs: [String]) {
        self.name = name
        self.titleArgs = titleArgs
        self.contentArgs = contentArgs
    }
}

/// Localisation keys of an alert (`title-loc-key` and friends).
public struct LocalizationKeys: Hashable, Sendable {
    public var titleKey: String?
    public var titleArgs: [String]?
    public var bodyKey: String?
    public var bodyArgs: [String]?
    public init(titleKey: String? = nil, titleArgs: [String]? = nil, bodyKey: String? = nil, bodyArgs: [String]? = nil) {
        self.titleKey = titleKey
        self.titleArgs = titleArgs
        self.bodyKey = bodyKey
        self.bodyArgs = bodyArgs
    }
    public var isEmpty: Bool { titleKey == nil && bodyKey == nil }
}

/// A message in canonical form: what any dialect's message means for push.
public struct PushMessage: Hashable, Sendable {
    public var id: String
    public var sender: UserID
    public var kind: ChatKind
    /// The group id, for group messages.
    public var groupId: String?
    /// The group's name as the message carries it (Tencent).
    public var groupName: String?
    public var content: [ContentPart]
    /// Content translations by language code.
    public var translations: [String: String]
    /// Replaces the derived content, keeping the name prefix (`offlinePushInfo.desc`).
    public var contentOverride: String?
    /// Whole-body override, weakest (`em_push_content`).
    public var pushContent: String?
    /// Whole-body override (`em_alert_body`).
    public var alertBody: String?
    /// Title, weakest (`em_push_title`).
    public var pushTitle: String?
    /// Title (`em_alert_title`).
    public var alertTitle: String?
    public var alertSubtitle: String?
    public var template: TemplateReference?
    public var localization: LocalizationKeys
    public var category: String?
    public var mutableContent: Bool
    /// A badge value to show instead of the counter (`em_push_badge`).
    public var badgeOverride: Int?
    /// The message does not count toward the badge and shows none (`ignoreBadge`).
    public var ignoreBadge: Bool
    public var sound: SoundChoice?
    /// The message's custom extension (`extern` / `ext`), one canonical value.
    public var extensionValue: JSONValue?
    /// Do not push (`em_ignore_notification`, `pushFlag` 1).
    public var ignore: Bool
    /// Push even through do-not-disturb and remind types (`em_force_notification`).
    public var force: Bool
    public var mentions: Mentions
    /// Android push options (Tencent `androidConfig` / REST `AndroidInfo`): carried as given so a
    /// translation can keep or report them; they have no effect on APNs (SPEC §10).
    public var androidOptions: JSONValue?

    /// A plain message with no push options.
    public init(id: String, sender: UserID, kind: ChatKind, groupId: String? = nil, content: [ContentPart]) {
        self.id = id
        self.sender = sender
        self.kind = kind
        self.groupId = groupId
        self.groupName = nil
        self.content = content
        self.translations = [:]
        self.contentOverride = nil
        self.pushContent = nil
        self.alertBody = nil
        self.pushTitle = nil
        self.alertTitle = nil
        self.alertSubtitle = nil
        self.template = nil
        self.localization = LocalizationKeys()
        self.category = nil
        self.mutableContent = false
        self.badgeOverride = nil
        self.ignoreBadge = false
        self.sound = nil
        self.extensionValue = nil
        self.ignore = false
        self.force = false
        self.mentions = .nobody
        self.androidOptions = nil
    }

    /// The conversation this message belongs to, seen from the receiver.
    public var receiverConversation: ConversationKey {
        switch kind {
        case .group: return ConversationKey(.group, groupId ?? "")
        case .oneToOne: return ConversationKey(.oneToOne, sender)
        }
    }

    /// The content derived from the parts, in order, with no separator.
    public var derivedContent: String {
        var s = ""
        for part in content { s += part.pushText }
        return s
    }

    /// Whether there is anything at all to display to a receiver (rule 4: empty content is not
    /// pushed). A non-empty translation in the receiver's language is content even when the
    /// original text is empty (SPEC §10).
    /// - Parameter language: the receiver's preferred notification language, if any.
    public func hasDisplayableContent(forLanguage language: String?) -> Bool {
        hasDisplayableContent(forLanguage: language, derivedContent: nil)
    }

    /// ``hasDisplayableContent(forLanguage:)`` with the ``derivedContent`` when already known.
    func hasDisplayableContent(forLanguage language: String?, derivedContent: String?) -> Bool {
        if let contentOverride, !contentOverride.isEmpty { return true }
        if hasTranslation(forLanguage: language) { return true }
        if pushContent?.isEmpty == false || alertBody?.isEmpty == false || template != nil { return true }
        if localization.bodyKey != nil { return true }
        return !(derivedContent ?? self.derivedContent).isEmpty
    }

    /// Whether the message carries a non-empty translation in this language.
    public func hasTranslation(forLanguage language: String?) -> Bool {
        guard let language, !translations.isEmpty else { return false }
        return translations[language]?.isEmpty == false
    }
}

/// Who a message goes to, before the sender is excluded.
public enum Audience: Hashable, Sendable {
    /// One-to-one: these users, in this order.
    case users([UserID])
    /// Every member of a group, in membership order.
    case group(String)
}
