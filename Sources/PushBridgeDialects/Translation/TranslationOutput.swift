import PushBridgeCore
import PushBridgeJSON

/// One thing a translation could not carry into the target dialect.
public struct TranslationLoss: Hashable, Sendable, CustomStringConvertible {
    /// The canonical field that is lost or changed.
    public var field: CanonicalField
    /// Whose state it is; `nil` for the message.
    public var user: UserID?
    /// The entry within the field (a conversation, a group), when keyed.
    public var key: String?
    /// Why, and what was written instead (if anything).
    public var why: String
    /// Other canonical fields the replacement changes (an `em_push_content` written as `desc`
    /// also sets the content override).
    public var alsoChanges: [CanonicalField]

    public init(_ field: CanonicalField, user: UserID? = nil, key: String? = nil, why: String, alsoChanges: [CanonicalField] = []) {
        self.field = field
        self.user = user
        self.key = key
        self.why = why
        self.alsoChanges = alsoChanges
    }

    /// `{"field", "user"?, "key"?, "why", "alsoChanges"?}`.
    public var json: JSONValue {
        var o = JSONObject()
        o["field"] = .string(field.rawValue)
        if let user { o["user"] = .string(user) }
        if let key { o["key"] = .string(key) }
        o["why"] = .string(why)
        if !alsoChanges.isEmpty { o["alsoChanges"] = .array(alsoChanges.map { .string($0.rawValue) }) }
        return .object(o)
    }

    public var description: String {
        field.rawValue + (key.map { "[\($0)]" } ?? "") + (user.map { " (\($0))" } ?? "") + ": " + why
    }
}

/// What a dialect writes while translating: setup calls per user, and losses.
public struct TranslationOutput: Sendable {
    /// The scenario's app configuration (certificates by name or busiId).
    public let app: AppConfiguration
    /// The scenario's `now`: a call made at another instant carries `at`.
    public let now: Instant
    /// The receiver of the message.
    public let receiver: UserID
    /// The appkey to write in `initializeSDK` (not canonical; carried over when the source had one).
    public let appkey: String

    /// Calls per user, in order; each a call object, with `at` when not made at `now`.
    public private(set) var calls: [UserID: [JSONValue]] = [:]
    public private(set) var losses: [TranslationLoss] = []

    public init(app: AppConfiguration, now: Instant, receiver: UserID, appkey: String) {
        self.app = app
        self.now = now
        self.receiver = receiver
        self.appkey = appkey
    }

    /// Adds a call for a user.
    /// - Parameters:
    ///   - user: whose `calls` list gets it.
    ///   - name: the call name.
    ///   - params: its parameters, in order.
    ///   - at: when it is made; written only when not `now`.
    public mutating func call(_ user: UserID, _ name: String, _ params: [(String, JSONValue)] = [], at: Instant? = nil) {
        var object = JSONObject([("call", .string(name))] + params)
        if let at, at != now { object["at"] = .string(at.description) }
        calls[user, default: []].append(.object(object))
    }

    /// Records a loss.
    public mutating func lose(_ field: CanonicalField, user: UserID? = nil, key: String? = nil, _ why: String, alsoChanges: [CanonicalField] = []) {
        let loss = TranslationLoss(field, user: user, key: key, why: why, alsoChanges: alsoChanges)
        if !losses.contains(loss) { losses.append(loss) }
    }

    /// Reports the conversation settings a dialect cannot keep: every duration, and each remind
    /// type `keepsRemindType` refuses.
    public mutating func loseConversations(
        of state: UserState, dialect: String, keepsRemindType: (ConversationKey, RemindType) -> Bool = { _, _ in false }
    ) {
        for (key, settings) in state.conversations.sorted(by: { $0.key.description < $1.key.description }) {
            if let remind = settings.remindType, !keepsRemindType(key, remind) {
                lose(.conversationRemindType, user: state.user, key: key.description, "\(dialect) cannot set remind type \(remind.rawValue) on this conversation")
            }
            if let period = settings.silentPeriod, period.until > now {
                lose(.conversationSilentPeriod, user: state.user, key: key.description, "\(dialect) has no do-not-disturb duration per conversation")
            }
        }
    }
}
