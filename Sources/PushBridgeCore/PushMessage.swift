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
    /// A command (Easemob / Agora Chat `cmd`, pass-through): an action for the receiving app,
    /// nothing to show; a message holding one is never pushed (Specification §14).
    case command(action: String)

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
        case .command: return ""
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
///
/// A value type whose fields live behind one reference: copying a message (into a prepared push, a
/// scenario step) is one retain; changing a copy that is shared copies its fields first.
public struct PushMessage: Hashable, Sendable, CustomReflectable {
    /// The stored fields.
    @usableFromInline struct Fields: Hashable, Sendable {
        @usableFromInline var id: String
        @usableFromInline var sender: UserID
        @usableFromInline var kind: ChatKind
        @usableFromInline var groupId: String?
        @usableFromInline var groupName: String?
        @usableFromInline var content: [ContentPart]
        @usableFromInline var translations: [String: String]
        @usableFromInline var contentOverride: String?
        @usableFromInline var pushContent: String?
        @usableFromInline var alertBody: String?
        @usableFromInline var pushTitle: String?
        @usableFromInline var alertTitle: String?
        @usableFromInline var alertSubtitle: String?
        @usableFromInline var template: TemplateReference?
        @usableFromInline var localization: LocalizationKeys
        @usableFromInline var category: String?
        @usableFromInline var mutableContent: Bool
        @usableFromInline var badgeOverride: Int?
        @usableFromInline var ignoreBadge: Bool
        @usableFromInline var sound: SoundChoice?
        @usableFromInline var extensionValue: JSONValue?
        @usableFromInline var ignore: Bool
        @usableFromInline var force: Bool
        @usableFromInline var mentions: Mentions
        @usableFromInline var androidOptions: JSONValue?
    }

    /// The fields, shared by copies until one of them changes.
    @usableFromInline var storage: CopyOnWrite<Fields>

    @inlinable public var id: String {
        get { storage.value.id }
        _modify { yield &storage.value.id }
    }
    @inlinable public var sender: UserID {
        get { storage.value.sender }
        _modify { yield &storage.value.sender }
    }
    @inlinable public var kind: ChatKind {
        get { storage.value.kind }
        _modify { yield &storage.value.kind }
    }
    /// The group id, for group messages.
    @inlinable public var groupId: String? {
        get { storage.value.groupId }
        _modify { yield &storage.value.groupId }
    }
    /// The group's name as the message carries it (Tencent).
    @inlinable public var groupName: String? {
        get { storage.value.groupName }
        _modify { yield &storage.value.groupName }
    }
    @inlinable public var content: [ContentPart] {
        get { storage.value.content }
        _modify { yield &storage.value.content }
    }
    /// Content translations by language code.
    @inlinable public var translations: [String: String] {
        get { storage.value.translations }
        _modify { yield &storage.value.translations }
    }
    /// Replaces the derived content, keeping the name prefix (`offlinePushInfo.desc`).
    @inlinable public var contentOverride: String? {
        get { storage.value.contentOverride }
        _modify { yield &storage.value.contentOverride }
    }
    /// Whole-body override, weakest (`em_push_content`).
    @inlinable public var pushContent: String? {
        get { storage.value.pushContent }
        _modify { yield &storage.value.pushContent }
    }
    /// Whole-body override (`em_alert_body`).
    @inlinable public var alertBody: String? {
        get { storage.value.alertBody }
        _modify { yield &storage.value.alertBody }
    }
    /// Title, weakest (`em_push_title`).
    @inlinable public var pushTitle: String? {
        get { storage.value.pushTitle }
        _modify { yield &storage.value.pushTitle }
    }
    /// Title (`em_alert_title`).
    @inlinable public var alertTitle: String? {
        get { storage.value.alertTitle }
        _modify { yield &storage.value.alertTitle }
    }
    @inlinable public var alertSubtitle: String? {
        get { storage.value.alertSubtitle }
        _modify { yield &storage.value.alertSubtitle }
    }
    @inlinable public var template: TemplateReference? {
        get { storage.value.template }
        _modify { yield &storage.value.template }
    }
    @inlinable public var localization: LocalizationKeys {
        get { storage.value.localization }
        _modify { yield &storage.value.localization }
    }
    @inlinable public var category: String? {
        get { storage.value.category }
        _modify { yield &storage.value.category }
    }
    @inlinable public var mutableContent: Bool {
        get { storage.value.mutableContent }
        _modify { yield &storage.value.mutableContent }
    }
    /// A badge value to show instead of the counter (`em_push_badge`).
    @inlinable public var badgeOverride: Int? {
        get { storage.value.badgeOverride }
        _modify { yield &storage.value.badgeOverride }
    }
    /// The message does not count toward the badge and shows none (`ignoreBadge`).
    @inlinable public var ignoreBadge: Bool {
        get { storage.value.ignoreBadge }
        _modify { yield &storage.value.ignoreBadge }
    }
    @inlinable public var sound: SoundChoice? {
        get { storage.value.sound }
        _modify { yield &storage.value.sound }
    }
    /// The message's custom extension (`extern` / `ext`), one canonical value.
    @inlinable public var extensionValue: JSONValue? {
        get { storage.value.extensionValue }
        _modify { yield &storage.value.extensionValue }
    }
    /// Do not push (`em_ignore_notification`, `pushFlag` 1).
    @inlinable public var ignore: Bool {
        get { storage.value.ignore }
        _modify { yield &storage.value.ignore }
    }
    /// Push even through do-not-disturb and remind types (`em_force_notification`).
    @inlinable public var force: Bool {
        get { storage.value.force }
        _modify { yield &storage.value.force }
    }
    @inlinable public var mentions: Mentions {
        get { storage.value.mentions }
        _modify { yield &storage.value.mentions }
    }
    /// Android push options (Tencent `androidConfig` / REST `AndroidInfo`): carried as given so a
    /// translation can keep or report them; they have no effect on APNs (Specification §10).
    @inlinable public var androidOptions: JSONValue? {
        get { storage.value.androidOptions }
        _modify { yield &storage.value.androidOptions }
    }

    /// The fields, as a struct's: what `print`, `dump` and test failures show.
    public var customMirror: Mirror { Mirror(self, children: Mirror(reflecting: storage.value).children, displayStyle: .struct) }

    /// A plain message with no push options.
    public init(id: String, sender: UserID, kind: ChatKind, groupId: String? = nil, content: [ContentPart]) {
        storage = CopyOnWrite(Fields(
            id: id, sender: sender, kind: kind, groupId: groupId, groupName: nil, content: content, translations: [:],
            contentOverride: nil, pushContent: nil, alertBody: nil, pushTitle: nil, alertTitle: nil, alertSubtitle: nil,
            template: nil, localization: LocalizationKeys(), category: nil, mutableContent: false, badgeOverride: nil,
            ignoreBadge: false, sound: nil, extensionValue: nil, ignore: false, force: false, mentions: .nobody, androidOptions: nil))
    }

    /// Whether the message is a command (`cmd`): never pushed.
    public var isCommand: Bool {
        content.contains { if case .command = $0 { return true } else { return false } }
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
        let content = content
        if content.count == 1 { return content[0].pushText }  // most messages: their one part's text as it is
        var s = ""
        for part in content { s += part.pushText }
        return s
    }

    /// Whether there is anything at all to display to a receiver (rule 4: empty content is not
    /// pushed). A non-empty translation in the receiver's language is content even when the
    /// original text is empty (Specification §10).
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
