extension UserState {
    /// The canonical fields in which this user's state differs from another's, as seen at an instant.
    ///
    /// What is compared is what decides and renders a push, so three things are normalised: presence
    /// is whether the user is online at `now` (a dialect's background grace is how it gets there); an
    /// unset app remind type equals `All`; a duration that ended by `now` equals none. The bound
    /// certificate (an Easemob step before a token), the grace itself and when devices were bound are not compared.
    /// - Parameters:
    ///   - other: the state to compare with.
    ///   - now: the instant presence and durations are evaluated at.
    /// - Returns: the differences in ``CanonicalField`` order, empty when equal.
    public func canonicalDifferences(from other: UserState, at now: Instant) -> [CanonicalDifference] {
        var out: [CanonicalDifference] = []
        func check<T: Equatable>(_ field: CanonicalField, key: String? = nil, _ a: T, _ b: T, _ text: (T) -> String) {
            if a != b { out.append(CanonicalDifference(field, key: key, left: text(a), right: text(b))) }
        }
        // Devices in binding order (newest first); when each was bound is not compared.
        check(.deviceToken, devices.map(\.token), other.devices.map(\.token)) { $0.isEmpty ? "(none)" : $0.joined(separator: ", ") }
        check(.deviceCertificate, devices.map(\.certificate), other.devices.map(\.certificate)) {
            $0.isEmpty ? "(none)" : $0.map(Self.describe).joined(separator: ", ")
        }
        check(.presence, isOnline(at: now), other.isOnline(at: now)) { $0 ? "online" : "offline" }
        check(.badge, badge, other.badge) { "\($0)" }
        check(.appRemindType, app.remindType ?? .all, other.app.remindType ?? .all) { $0.rawValue }
        check(.appWindow, app.window?.normalized, other.app.window?.normalized) { $0?.clockText ?? "(none)" }
        check(.appSilentPeriod, Self.live(app.silentPeriod, now), Self.live(other.app.silentPeriod, now)) { $0.map(Self.describe) ?? "(none)" }
        let keys = Set(conversations.keys).union(other.conversations.keys).sorted { $0.description < $1.description }
        for key in keys {
            let a = settings(for: key)
            let b = other.settings(for: key)
            check(.conversationRemindType, key: key.description, a.remindType, b.remindType) { $0?.rawValue ?? "(inherited)" }
            check(.conversationSilentPeriod, key: key.description, Self.live(a.silentPeriod, now), Self.live(b.silentPeriod, now)) {
                $0.map(Self.describe) ?? "(none)"
            }
        }
        check(.displayStyle, displayStyle, other.displayStyle) { $0.rawValue }
        check(.displayName, displayName, other.displayName) { $0.map { "\"\($0)\"" } ?? "(none)" }
        check(.language, language, other.language) { $0.map { "\"\($0)\"" } ?? "(none)" }
        check(.oneToOneSound, oneToOneSound, other.oneToOneSound) { $0.map { "\"\($0)\"" } ?? "(none)" }
        check(.groupSound, groupSound, other.groupSound) { $0.map { "\"\($0)\"" } ?? "(none)" }
        for group in Set(nameCards.keys).union(other.nameCards.keys).sorted() {
            check(.nameCards, key: group, nameCards[group], other.nameCards[group]) { $0.map { "\"\($0)\"" } ?? "(none)" }
        }
        return out
    }

    /// A duration that is still to end at `now`, else `nil`.
    static func live(_ period: SilentPeriod?, _ now: Instant) -> SilentPeriod? {
        guard let period, period.until > now else { return nil }
        return period
    }

    static func describe(_ c: Certificate) -> String {
        [c.name.map { "name \($0)" }, c.busiId.map { "busiId \($0)" }, "\(c.bundleId) \(c.environment.rawValue)"].compactMap { $0 }.joined(separator: ", ")
    }

    static func describe(_ p: SilentPeriod) -> String { "\(p.start) – \(p.until)" }
}

extension PushMessage {
    /// The canonical fields in which this message differs from another.
    /// - Parameter other: the message to compare with.
    /// - Returns: the differences in ``CanonicalField`` order, empty when equal.
    public func canonicalDifferences(from other: PushMessage) -> [CanonicalDifference] {
        var out: [CanonicalDifference] = []
        func check<T: Equatable>(_ field: CanonicalField, _ a: T, _ b: T) {
            if a != b { out.append(CanonicalDifference(field, left: Self.text(a), right: Self.text(b))) }
        }
        check(.messageID, id, other.id)
        check(.messageSender, sender, other.sender)
        check(.messageKind, kind.rawValue, other.kind.rawValue)
        check(.messageGroupID, groupId, other.groupId)
        check(.messageGroupName, groupName, other.groupName)
        check(.messageContent, content, other.content)
        check(.messageTranslations, translations, other.translations)
        check(.messageContentOverride, contentOverride, other.contentOverride)
        check(.messagePushContent, pushContent, other.pushContent)
        check(.messageAlertBody, alertBody, other.alertBody)
        check(.messagePushTitle, pushTitle, other.pushTitle)
        check(.messageAlertTitle, alertTitle, other.alertTitle)
        check(.messageAlertSubtitle, alertSubtitle, other.alertSubtitle)
        check(.messageTemplate, template, other.template)
        check(.messageLocalization, localization, other.localization)
        check(.messageCategory, category, other.category)
        check(.messageMutableContent, mutableContent, other.mutableContent)
        check(.messageBadgeOverride, badgeOverride, other.badgeOverride)
        check(.messageIgnoreBadge, ignoreBadge, other.ignoreBadge)
        check(.messageSound, sound, other.sound)
        check(.messageExtension, extensionValue, other.extensionValue)
        check(.messageIgnore, ignore, other.ignore)
        check(.messageForce, force, other.force)
        check(.messageMentions, mentions, other.mentions)
        check(.messageAndroidOptions, androidOptions, other.androidOptions)
        return out
    }

    static func text<T>(_ value: T) -> String {
        if let optional = value as? any OptionalProtocol { return optional.isNone ? "(none)" : optional.unwrappedDescription }
        return String(describing: value)
    }
}

/// Lets ``PushMessage/text(_:)`` print optionals without `Optional(…)`.
protocol OptionalProtocol {
    var isNone: Bool { get }
    var unwrappedDescription: String { get }
}

extension Optional: OptionalProtocol {
    var isNone: Bool { self == nil }
    var unwrappedDescription: String {
        switch self {
        case .some(let v): return String(describing: v)
        case .none: return "(none)"
        }
    }
}
