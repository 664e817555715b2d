/// Decides whether a message is pushed to one receiver (Specification §4, in its normative order).
///
/// Pure: no I/O, no clock, no dialect knowledge. The first rule that applies gives the reason.
public struct PushDecider: Sendable {
    public let app: AppConfiguration
    public let renderer: PayloadRenderer

    public init(app: AppConfiguration, renderer: PayloadRenderer = PayloadRenderer()) {
        self.app = app
        self.renderer = renderer
    }

    /// Decides for one receiver.
    /// - Parameters:
    ///   - message: the canonical message.
    ///   - sender: the sender's state (display name, name cards), if known.
    ///   - receiver: the receiver's state.
    ///   - profile: the output shape to render with.
    ///   - now: the instant the message is sent.
    public func decide(_ message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, now: Instant) -> PushDecision {
        if let reason = suppression(message, receiver: receiver, now: now) { return .suppressed(reason) }
        return .rendered(renderer.render(message, sender: sender, receiver: receiver, profile: profile, app: app), to: receiver)
    }

    /// Rules 1–7: the reason not to push, or `nil` when the message is to be rendered.
    public func suppression(_ message: PushMessage, receiver: UserState, now: Instant) -> SuppressionReason? {
        suppression(message, receiver: receiver, now: now, hasContent: message.hasDisplayableContent(forLanguage: receiver.language))
    }

    /// Rules 1–7, with rule 4's answer given (a prepared message knows it without deriving the content again).
    func suppression(_ message: PushMessage, receiver: UserState, now: Instant, hasContent: @autoclosure () -> Bool) -> SuppressionReason? {
        if receiver.isOnline(at: now) { return .online }
        if receiver.devices.isEmpty { return .noDevice }
        if message.isCommand { return .command }
        if message.ignore { return .ignored }
        if !hasContent() { return .emptyContent }
        if message.force { return nil }
        // A receiver loaded for one message holds only its conversation's settings, mostly none.
        let conversation = receiver.conversations.isEmpty ? nil : receiver.conversations[message.receiverConversation]
        if isDoNotDisturbActive(receiver: receiver, conversation: conversation, now: now) { return .doNotDisturb }
        let remind = conversation?.remindType ?? receiver.app.remindType ?? .all
        switch remind {
        case .all: return nil
        case .none: return .muted
        case .mentionOnly: return message.mentions.includes(receiver.user) ? nil : .notMentioned
        }
    }

    /// Rule 6: an app window, an app duration or a conversation duration is active.
    public func isDoNotDisturbActive(receiver: UserState, conversation: ConversationPushSettings?, now: Instant) -> Bool {
        if let period = receiver.app.silentPeriod, period.isActive(at: now) { return true }
        if let period = conversation?.silentPeriod, period.isActive(at: now) { return true }
        if let window = receiver.app.window {
            if window.isAllDay { return true }
            return window.contains(minuteOfDay: LocalClock(timeZone: receiver.timeZone).minuteOfDay(at: now))
        }
        return false
    }
}
