import PushBridgeJSON

/// One message prepared for many receivers: everything that does not depend on the receiver is
/// worked out once, and receivers that see the same alert share one written payload.
///
/// A receiver's payload is the payload of its *render class* (display style, translation, sound)
/// with its badge digits and (Easemob) its id patched in. When that does not fit in the size limit,
/// the receiver's payload is written again from the class's alert and parts, and shortened; either
/// way the bytes are those of ``PayloadRenderer/render(_:sender:receiver:profile:app:)``.
///
/// Deciding stays the pure core's job: ``decide(for:now:)`` applies the rules of ``PushDecider``.
public struct PreparedPush: Sendable {
    /// The message.
    public let message: PushMessage
    /// The sender's state (display name, name cards), if known.
    public let sender: UserState?
    /// The output shape.
    public let profile: Profile
    let decider: PushDecider
    let derivedContent: String
    /// Rule 4 without a translation: whether anything is displayable in any language.
    let hasContentInAnyLanguage: Bool
    /// Whether each receiver's badge counter is shown (no override, not ignored).
    let badgeVaries: Bool
    /// The first render class seen, kept inline: a one-to-one message has only this one.
    var firstClass: RenderedClass?
    /// The render classes seen after the first, in order (most messages have one to three: a scan
    /// beats hashing).
    var laterClasses: [RenderedClass] = []
    /// Whether receivers' payloads are written from kept render classes (`false`: a message for
    /// one receiver, whose payload is written alone and kept by nothing but its request).
    let keepsClasses: Bool

    /// A render class and its template.
    struct RenderedClass: Sendable {
        let key: RenderClass
        let template: Template
    }

    /// What a receiver's alert and `aps` depend on.
    struct RenderClass: Hashable, Sendable {
        var simpleBanner: Bool
        /// The language whose translation the content is (`nil`: the message's own content).
        var translation: String?
        var sound: String?
    }

    /// A class's payload as written for its first receiver, with where that receiver's badge digits
    /// and id are (another receiver's payload replaces them), and what it was written from. A class
    /// instance, so that taking it for each receiver is one retain, not one per string inside.
    /// `package` as its base class is: an internal subclass of a `package` class makes Swift 6.3 warn
    /// of an infinite recursion in code it synthesizes (none is written here).
    package final class Template: PayloadTemplate, @unchecked Sendable {
        let alert: PayloadRenderer.Alert
        let parts: PayloadRenderer.Parts
        /// Where the payload has its body and title literals (the same for every receiver: their
        /// badge and id come after them).
        let marks: PayloadRenderer.Marks

        /// - Parameters:
        ///   - bytes: the payload as written for the class's first receiver, with `marks`.
        ///   - writtenFor: that receiver's badge value and id.
        ///   - alert: the alert it was written from.
        ///   - parts: the rest it was written from.
        ///   - marks: where the payload has that receiver's badge digits and id, and the alert's literals.
        init(bytes: [UInt8], writtenFor: (badge: Int, receiver: String), alert: PayloadRenderer.Alert, parts: PayloadRenderer.Parts, marks: PayloadRenderer.Marks) {
            self.alert = alert
            self.parts = parts
            self.marks = marks
            super.init(bytes: bytes, badge: marks.badge, receiver: marks.receiver, writtenFor: writtenFor)
        }

        /// The class's payload template (the class itself).
        var payload: PayloadTemplate { self }
    }

    /// - Parameters:
    ///   - message: the canonical message.
    ///   - sender: the sender's state, if known.
    ///   - profile: the output shape.
    ///   - decider: the app's decider (its configuration and renderer).
    ///   - receivers: how many receivers it is decided for, when known: for one, its payload is
    ///     written alone (no render class is kept for receivers that will not come). Deciding for
    ///     more than that is still right, only slower.
    public init(_ message: PushMessage, sender: UserState?, profile: Profile, decider: PushDecider, receivers: Int? = nil) {
        self.message = message
        self.sender = sender
        self.profile = profile
        self.decider = decider
        keepsClasses = receivers.map { $0 > 1 } ?? true
        derivedContent = message.derivedContent
        hasContentInAnyLanguage = message.hasDisplayableContent(forLanguage: nil, derivedContent: derivedContent)
        badgeVaries = !message.ignoreBadge && message.badgeOverride == nil
    }

    /// Decides for one receiver: the same decision as ``PushDecider/decide(_:sender:receiver:profile:now:)``.
    /// - Parameters:
    ///   - receiver: the receiver's state.
    ///   - now: the instant the message is sent.
    public mutating func decide(for receiver: UserState, now: Instant) -> PushDecision {
        decide(for: receiver, badge: receiver.badge, now: now)
    }

    /// Decides for one receiver whose badge counter is kept apart from its state (a store's kept
    /// receivers: the state is borrowed as it is, not copied to set the counter).
    /// - Parameters:
    ///   - receiver: the receiver's state; its own `badge` is not read.
    ///   - badge: the receiver's badge counter before this message.
    ///   - now: the instant the message is sent.
    public mutating func decide(for receiver: UserState, badge: Int, now: Instant) -> PushDecision {
        fanOutDecision(for: receiver, badge: badge, now: now, devicesIn: nil).decision
    }

    /// Decides for one receiver of a fan-out, in the fan-out's form: a payload its class shares, and
    /// (a kept receiver) its devices referred to where they are kept.
    /// - Parameters:
    ///   - receiver: the receiver's state; its own `badge` is not read.
    ///   - badge: the receiver's badge counter before this message.
    ///   - now: the instant the message is sent.
    ///   - devicesIn: the rows that keep the receiver's devices (its `devices`), and its row; `nil`:
    ///     the request holds `receiver.devices` itself.
    package mutating func fanOutDecision(for receiver: UserState, badge: Int, now: Instant, devicesIn row: (rows: DeviceRows, row: Int)?) -> FanOutDecision {
        let suppression = decider.suppression(
            message, receiver: receiver, now: now, hasContent: hasContentInAnyLanguage || message.hasTranslation(forLanguage: receiver.language))
        if let reason = suppression { return .suppressed(reason) }
        guard let (body, counter) = body(for: receiver, badge: badge) else { return .suppressed(.payloadTooLarge) }
        let targets: FanOutRequest.Targets
        if let row { targets = .row(row.rows, row.row) } else { targets = .devices(receiver.devices) }
        return .push(FanOutRequest(body: body, targets: targets, badgeCounter: counter))
    }

    /// The payload for one receiver, byte for byte what ``PayloadRenderer/render(_:sender:receiver:profile:app:)`` writes.
    /// - Parameter receiver: the receiver's state.
    public mutating func render(for receiver: UserState) -> PayloadRenderer.Outcome {
        guard let (body, counter) = body(for: receiver, badge: receiver.badge) else { return .tooLarge }
        return .payload(body.written, badgeCounter: counter)
    }

    /// One receiver's payload as its class's template with the receiver's badge and id (or, when that
    /// does not fit, written alone and shortened), and its badge counter; `nil` when even shortened
    /// it does not fit.
    mutating func body(for receiver: UserState, badge current: Int) -> (FanOutRequest.Body, counter: Int)? {
        let renderer = decider.renderer
        let counter = message.ignoreBadge ? current : current + 1
        let badge = message.badgeOverride ?? counter
        guard keepsClasses else {
            // The only receiver: written alone (shortened when it does not fit), as the reference
            // does; no render class is looked up or kept.
            let alert = renderer.alert(for: message, sender: sender, receiver: receiver, profile: profile, app: decider.app, derivedContent: derivedContent)
            let parts = PayloadRenderer.Parts(message: message, sound: renderer.sound(for: message, receiver: receiver), profile: profile)
            return parts.render(alert, badge: badge, receiver: receiver.user, limit: renderer.limit).map { (.bytes($0), counter) }
        }
        let key = RenderClass(
            simpleBanner: receiver.displayStyle == .simpleBanner,
            translation: message.contentOverride == nil && !message.translations.isEmpty
                ? receiver.language.flatMap { message.translations[$0] == nil ? nil : $0 } : nil,
            sound: renderer.sound(for: message, receiver: receiver))
        let template: Template
        if let first = firstClass, first.key == key {
            template = first.template
        } else if let known = laterClasses.first(where: { $0.key == key }) {
            template = known.template
        } else {
            // The first receiver of its class: written in full, and kept for the others.
            template = write(key, receiver: receiver, badge: badge)
            if firstClass == nil {
                firstClass = RenderedClass(key: key, template: template)
            } else {
                laterClasses.append(RenderedClass(key: key, template: template))
            }
        }
        let payload = template.payload
        guard payload.fits(badge: badge, receiver: receiver.user, limit: renderer.limit) else {
            return shortened(template, receiver: receiver, badge: badge).map { (.bytes($0), counter) }
        }
        return (payload.isFixed ? .bytes(payload.bytes) : .patched(payload, badge: badge, receiver: receiver.user), counter)
    }

    /// Writes a receiver's payload in full, marking its badge digits and id.
    func write(_ key: RenderClass, receiver: UserState, badge: Int) -> Template {
        let renderer = decider.renderer
        let alert = renderer.alert(for: message, sender: sender, receiver: receiver, profile: profile, app: decider.app, derivedContent: derivedContent)
        let parts = PayloadRenderer.Parts(message: message, sound: key.sound, profile: profile)
        var w = JSONWriter(capacity: 256 + alert.text.utf8Count)
        let marks = parts.write(alert, badge: badge, receiver: receiver.user, badgeVaries: badgeVaries, into: &w)
        return Template(bytes: w.bytes, writtenFor: (badge, receiver.user), alert: alert, parts: parts, marks: marks)
    }

    /// A receiver's payload that does not fit as it is: shortening depends on every byte, so it is
    /// written for this receiver alone from its class's alert and parts (`nil`: it does not fit even so).
    func shortened(_ template: Template, receiver: UserState, badge: Int) -> [UInt8]? {
        template.parts.shortened(
            template.alert, badge: badge, receiver: receiver.user, limit: decider.renderer.limit,
            full: template.payload.size(badge: badge, receiver: receiver.user), marks: template.marks)
    }

    /// The number of distinct payloads written in full so far (one per render class).
    public var templateCount: Int { (firstClass == nil ? 0 : 1) + laterClasses.count }
}
