/// The output shape of one dialect: body format, default strings, custom top-level keys.
///
/// Every dialect is also a profile; rendering with another dialect's profile is how a migrated
/// server keeps old app builds receiving the payload they already parse.
public struct Profile: Hashable, Sendable, CustomStringConvertible {
    /// How the name and content are joined under `MessageSummary`.
    public enum BodyFormat: Hashable, Sendable {
        /// `<display name>:<content>`: display name, else the sender id; no space.
        case nameColonContent
        /// `<nick>: <content>`, groups `<name card or nick> (<group name>): <content>`.
        case tencent
    }

    /// How `aps.alert` is written.
    public enum AlertForm: Hashable, Sendable {
        /// Always a dictionary.
        case dictionary
        /// A plain string when it holds only a body, else a dictionary.
        case stringWhenBodyOnly
    }

    /// Which custom top-level keys accompany `aps`.
    public enum CustomKeys: Hashable, Sendable {
        /// `f` sender, `t` receiver, `m` message id, `g` group id (groups only), `e` extension (when given).
        case easemob
        /// `ext`: the extension as a string (non-strings as compact JSON), only when non-empty.
        case tencent
    }

    /// The profile id (equal to its dialect id).
    public let id: String
    /// The `SimpleBanner` body.
    public let genericBody: String
    public let bodyFormat: BodyFormat
    public let alertForm: AlertForm
    public let customKeys: CustomKeys

    public init(id: String, genericBody: String, bodyFormat: BodyFormat, alertForm: AlertForm, customKeys: CustomKeys) {
        self.id = id
        self.genericBody = genericBody
        self.bodyFormat = bodyFormat
        self.alertForm = alertForm
        self.customKeys = customKeys
    }

    public var description: String { id }

    /// Easemob/Agora legacy push (seeds 000, 001).
    public static let easemobLegacy = Profile(
        id: "easemob-legacy", genericBody: "you got a new message", bodyFormat: .nameColonContent, alertForm: .dictionary,
        customKeys: .easemob)
    /// Agora Chat silent mode (seeds 002, 003).
    public static let agoraSilent = Profile(
        id: "agora-silent", genericBody: "You have a new message", bodyFormat: .nameColonContent, alertForm: .dictionary,
        customKeys: .easemob)
    /// Tencent IM legacy TIM (seed 004).
    public static let tencentTIM = Profile(
        id: "tencent-tim", genericBody: "You have a new message", bodyFormat: .tencent, alertForm: .stringWhenBodyOnly,
        customKeys: .tencent)

    /// The built-in profiles.
    public static let builtIn: [Profile] = [.easemobLegacy, .agoraSilent, .tencentTIM]

    /// A built-in profile by id.
    public static func named(_ id: String) -> Profile? { builtIn.first { $0.id == id } }
}
