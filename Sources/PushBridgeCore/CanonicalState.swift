import Foundation
import PushBridgeJSON

/// A user id as the chat vendor knows it.
public typealias UserID = String

/// How much an offline push shows.
public enum DisplayStyle: String, Hashable, Sendable, CaseIterable {
    /// Only the profile's generic text ("You have a new message").
    case simpleBanner = "SimpleBanner"
    /// The sender's name and the message content.
    case messageSummary = "MessageSummary"
}

/// Which messages a receiver wants pushed.
public enum RemindType: String, Hashable, Sendable, CaseIterable {
    case all = "All"
    case mentionOnly = "MentionOnly"
    case none = "None"
}

/// One-to-one or group.
public enum ChatKind: String, Hashable, Sendable, CaseIterable {
    case oneToOne = "Chat"
    case group = "GroupChat"
}

/// A conversation from the receiver's side: the peer for one-to-one, the group for groups.
public struct ConversationKey: Hashable, Sendable, CustomStringConvertible {
    public var kind: ChatKind
    public var id: String
    public init(_ kind: ChatKind, _ id: String) {
        self.kind = kind
        self.id = id
    }
    public var description: String { "\(kind.rawValue):\(id)" }
}

/// A push certificate (or APNs key binding) of the app: what a device token is registered under.
///
/// Its fields sit behind one shared reference (copy-on-write, as ``UserState``'s): every device
/// carries its certificate, so a device is 32 bytes instead of 80, copying one retains two objects
/// instead of four, and devices loaded with one certificate share its fields (and compare equal at
/// once). Changing a copy that is shared copies the fields first.
public struct Certificate: Hashable, Sendable, CustomReflectable {
    /// The stored fields.
    @usableFromInline struct Fields: Hashable, Sendable {
        @usableFromInline var name: String?
        @usableFromInline var busiId: String?
        @usableFromInline var bundleId: String
        @usableFromInline var environment: APNsEnvironment
    }

    /// The fields, shared by copies until one of them changes.
    @usableFromInline var storage: CopyOnWrite<Fields>

    /// The Easemob/Agora certificate name (`apnsCertName`).
    @inlinable public var name: String? {
        get { storage.value.name }
        _modify { yield &storage.value.name }
    }
    /// The Tencent certificate id (`busiId`).
    @inlinable public var busiId: String? {
        get { storage.value.busiId }
        _modify { yield &storage.value.busiId }
    }
    /// The app's bundle id: the `apns-topic`.
    @inlinable public var bundleId: String {
        get { storage.value.bundleId }
        _modify { yield &storage.value.bundleId }
    }
    /// `development` or `production`.
    @inlinable public var environment: APNsEnvironment {
        get { storage.value.environment }
        _modify { yield &storage.value.environment }
    }

    public init(name: String?, busiId: String?, bundleId: String, environment: APNsEnvironment) {
        storage = CopyOnWrite(Fields(name: name, busiId: busiId, bundleId: bundleId, environment: environment))
    }

    public var customMirror: Mirror { Mirror(self, children: Mirror(reflecting: storage.value).children, displayStyle: .struct) }
}

/// The APNs environment a certificate pushes to.
public enum APNsEnvironment: String, Hashable, Sendable, CaseIterable {
    case development
    case production
}

/// A registered device: its hex token (lower case), the certificate it was registered under, and when.
public struct Device: Hashable, Sendable {
    /// The APNs device token, hex, lower case: one app install on one phone.
    public var token: String
    public var certificate: Certificate
    /// When the token was last bound (a re-bind refreshes it). APNs feedback older than this does
    /// not remove the device (Specification §13).
    public var boundAt: Instant

    /// - Parameters:
    ///   - token: hex, lower case.
    ///   - certificate: the certificate bound when the token was registered.
    ///   - boundAt: when it was registered.
    public init(token: String, certificate: Certificate, boundAt: Instant = Instant(milliseconds: 0)) {
        self.token = token
        self.certificate = certificate
        self.boundAt = boundAt
    }
}

/// Whether the receiver's app holds a live connection.
public enum Presence: Hashable, Sendable {
    case online
    /// Went to the background at this instant; may still hold its connection for a grace period.
    case background(since: Instant)
    case offline
}

/// App-level (all conversations) push settings of a receiver.
public struct AppPushSettings: Hashable, Sendable {
    /// `nil` inherits the default (`All`).
    public var remindType: RemindType?
    /// The daily do-not-disturb window, if any.
    public var window: DoNotDisturbWindow?
    /// A do-not-disturb duration active on [start, until).
    public var silentPeriod: SilentPeriod?
    public init(remindType: RemindType? = nil, window: DoNotDisturbWindow? = nil, silentPeriod: SilentPeriod? = nil) {
        self.remindType = remindType
        self.window = window
        self.silentPeriod = silentPeriod
    }
}

/// A one-shot do-not-disturb duration: active on [start, until).
public struct SilentPeriod: Hashable, Sendable {
    public var start: Instant
    public var until: Instant
    public init(start: Instant, until: Instant) {
        self.start = start
        self.until = until
    }
    public func isActive(at instant: Instant) -> Bool { instant >= start && instant < until }
}

/// Per-conversation push settings of a receiver.
public struct ConversationPushSettings: Hashable, Sendable {
    /// `nil` inherits the app remind type.
    public var remindType: RemindType?
    public var silentPeriod: SilentPeriod?
    public init(remindType: RemindType? = nil, silentPeriod: SilentPeriod? = nil) {
        self.remindType = remindType
        self.silentPeriod = silentPeriod
    }
    public var isEmpty: Bool { remindType == nil && silentPeriod == nil }
}

/// Everything PushBridge keeps about one user, as receiver and as sender.
///
/// A value type whose fields live behind one reference: copying a state (into a decision, out of a
/// store's kept rows) is one retain, not one per string and collection inside; changing a copy that
/// is shared copies its fields first.
public struct UserState: Hashable, Sendable, CustomReflectable {
    /// The stored fields.
    @usableFromInline struct Fields: Hashable, Sendable {
        @usableFromInline var user: UserID
        @usableFromInline var devices: [Device]
        @usableFromInline var boundCertificate: Certificate?
        @usableFromInline var presence: Presence
        @usableFromInline var backgroundGraceSeconds: Int64
        @usableFromInline var badge: Int
        @usableFromInline var app: AppPushSettings
        @usableFromInline var conversations: [ConversationKey: ConversationPushSettings]
        @usableFromInline var displayStyle: DisplayStyle
        @usableFromInline var displayName: String?
        @usableFromInline var language: String?
        @usableFromInline var oneToOneSound: String?
        @usableFromInline var groupSound: String?
        @usableFromInline var nameCards: [String: String]
        @usableFromInline var timeZone: TimeZone
    }

    /// The fields, shared by copies until one of them changes.
    @usableFromInline var storage: CopyOnWrite<Fields>

    /// The user id.
    @inlinable public var user: UserID {
        get { storage.value.user }
        _modify { yield &storage.value.user }
    }
    /// The registered devices, newest binding first (Specification §10); one token appears once.
    @inlinable public var devices: [Device] {
        get { storage.value.devices }
        _modify { yield &storage.value.devices }
    }
    /// The certificate bound by SDK initialisation, used by a later token registration.
    @inlinable public var boundCertificate: Certificate? {
        get { storage.value.boundCertificate }
        _modify { yield &storage.value.boundCertificate }
    }
    /// Whether the app holds a live connection.
    @inlinable public var presence: Presence {
        get { storage.value.presence }
        _modify { yield &storage.value.presence }
    }
    /// How long a backgrounded app keeps its connection (Easemob/Agora: 120 s; Tencent: 0).
    @inlinable public var backgroundGraceSeconds: Int64 {
        get { storage.value.backgroundGraceSeconds }
        _modify { yield &storage.value.backgroundGraceSeconds }
    }
    /// The receiver's badge counter: what the last push showed.
    @inlinable public var badge: Int {
        get { storage.value.badge }
        _modify { yield &storage.value.badge }
    }
    /// App-level push settings.
    @inlinable public var app: AppPushSettings {
        get { storage.value.app }
        _modify { yield &storage.value.app }
    }
    /// Per-conversation push settings, by conversation; empty ones are not kept.
    @inlinable public var conversations: [ConversationKey: ConversationPushSettings] {
        get { storage.value.conversations }
        _modify { yield &storage.value.conversations }
    }
    /// How much a push to this user shows.
    @inlinable public var displayStyle: DisplayStyle {
        get { storage.value.displayStyle }
        _modify { yield &storage.value.displayStyle }
    }
    /// The sender's push display name (Easemob/Agora display name, Tencent nick).
    @inlinable public var displayName: String? {
        get { storage.value.displayName }
        _modify { yield &storage.value.displayName }
    }
    /// Preferred notification language; `nil` when unset.
    @inlinable public var language: String? {
        get { storage.value.language }
        _modify { yield &storage.value.language }
    }
    /// Tencent default sound for one-to-one conversations.
    @inlinable public var oneToOneSound: String? {
        get { storage.value.oneToOneSound }
        _modify { yield &storage.value.oneToOneSound }
    }
    /// Tencent default sound for group conversations.
    @inlinable public var groupSound: String? {
        get { storage.value.groupSound }
        _modify { yield &storage.value.groupSound }
    }
    /// Group name cards of this user, by group id.
    @inlinable public var nameCards: [String: String] {
        get { storage.value.nameCards }
        _modify { yield &storage.value.nameCards }
    }
    /// The receiver's time zone for do-not-disturb windows.
    @inlinable public var timeZone: TimeZone {
        get { storage.value.timeZone }
        _modify { yield &storage.value.timeZone }
    }

    /// The fields, as a struct's: what `print`, `dump` and test failures show.
    public var customMirror: Mirror { Mirror(self, children: Mirror(reflecting: storage.value).children, displayStyle: .struct) }

    /// UTC, every state's time zone until one is known (made once: `TimeZone(identifier:)` is not cheap).
    public static let utc = TimeZone(identifier: "UTC")!

    /// A user with no settings.
    /// - Parameters:
    ///   - user: the user id.
    ///   - displayStyle: the dialect's default display style.
    ///   - backgroundGraceSeconds: the dialect's background grace.
    ///   - timeZone: the user's time zone (do-not-disturb hours); UTC by default.
    public init(user: UserID, displayStyle: DisplayStyle, backgroundGraceSeconds: Int64, timeZone: TimeZone = UserState.utc) {
        storage = CopyOnWrite(Fields(
            user: user, devices: [], boundCertificate: nil, presence: .offline, backgroundGraceSeconds: backgroundGraceSeconds,
            badge: 0, app: AppPushSettings(), conversations: [:], displayStyle: displayStyle, displayName: nil, language: nil,
            oneToOneSound: nil, groupSound: nil, nameCards: [:], timeZone: timeZone))
    }

    /// Conversation settings, empty when none are stored.
    public func settings(for conversation: ConversationKey) -> ConversationPushSettings {
        conversations[conversation] ?? ConversationPushSettings()
    }

    /// Replaces a conversation's settings, dropping the entry when it becomes empty.
    public mutating func setSettings(_ settings: ConversationPushSettings, for conversation: ConversationKey) {
        conversations[conversation] = settings.isEmpty ? nil : settings
    }

    /// Adds a device, or refreshes the one with the same token (new certificate, new binding time):
    /// either way it becomes the newest binding.
    /// - Parameter device: the device as bound now.
    public mutating func bind(_ device: Device) {
        devices.removeAll { $0.token == device.token }
        devices.insert(device, at: 0)
    }

    /// Removes the device with this token.
    /// - Parameter token: hex, lower case.
    /// - Returns: whether the user had it.
    @discardableResult
    public mutating func removeDevice(token: String) -> Bool {
        guard let index = devices.firstIndex(where: { $0.token == token }) else { return false }
        devices.remove(at: index)
        return true
    }

    /// Changes presence; becoming online resets the badge counter (it counts pushes since the user
    /// was last online, Specification §10).
    /// - Parameter presence: the new presence.
    public mutating func setPresence(_ presence: Presence) {
        if presence == .online && self.presence != .online { badge = 0 }
        self.presence = presence
    }

    /// Whether the receiver holds a live connection at an instant.
    public func isOnline(at now: Instant) -> Bool {
        switch presence {
        case .online: return true
        case .offline: return false
        case .background(let since): return now < since.adding(seconds: backgroundGraceSeconds)
        }
    }
}

/// The app-wide configuration a scenario declares: certificates and push templates.
public struct AppConfiguration: Hashable, Sendable {
    public var certificates: [Certificate]
    public var templates: [PushTemplate]
    public init(certificates: [Certificate] = [], templates: [PushTemplate] = []) {
        self.certificates = certificates
        self.templates = templates
    }

    public func certificate(named name: String) -> Certificate? { certificates.first { $0.name == name } }
    public func certificate(busiId: String) -> Certificate? { certificates.first { $0.busiId == busiId } }
    public func template(named name: String) -> PushTemplate? { templates.first { $0.name == name } }
}

/// A push template with `{0}`, `{1}`… placeholders.
public struct PushTemplate: Hashable, Sendable {
    public var name: String
    public var titlePattern: String?
    public var contentPattern: String?
    public init(name: String, titlePattern: String?, contentPattern: String?) {
        self.name = name
        self.titlePattern = titlePattern
        self.contentPattern = contentPattern
    }

    /// Fills `{n}` with `args[n]`, where `n` is ASCII digits only (`{+1}` and `{-0}` stay as
    /// written, Specification §10); a missing argument leaves `{n}` as written.
    public static func fill(_ pattern: String, with args: [String]) -> String {
        guard pattern.contains("{") else { return pattern }
        var out = ""
        var chars = pattern[...]
        while let open = chars.firstIndex(of: "{") {
            out += chars[..<open]
            let after = chars[chars.index(after: open)...]
            if let close = after.firstIndex(of: "}"), !after[..<close].isEmpty,
                after[..<close].allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(after[..<close])
            {
                if n < args.count { out += args[n] } else { out += chars[open...close] }
                chars = after[after.index(after: close)...]
            } else {
                out += "{"
                chars = after
            }
        }
        out += chars
        return out
    }
}
