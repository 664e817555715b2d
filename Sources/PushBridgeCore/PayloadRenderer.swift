import PushBridgeJSON

/// Renders the APNs payload for one receiver with one profile (Specification §5).
///
/// Serialisation is deterministic: `aps` first with its keys in the order `alert`, `badge`,
/// `sound`, `category`, `mutable-content`; inside a dictionary alert `title`, `subtitle`, `body`,
/// `title-loc-key`, `title-loc-args`, `loc-key`, `loc-args`; then the profile's custom keys sorted.
public struct PayloadRenderer: Sendable {
    /// APNs' limit for a regular (non-VoIP) notification.
    public static let maximumPayloadBytes = 4096
    /// The sound value that means "no sound" (Tencent `kIOSOfflinePushNoSound`).
    public static let noSound = "push.no_sound"
    /// What shortening appends.
    public static let ellipsis = "…"

    /// The size limit in bytes.
    public let limit: Int

    public init(limit: Int = PayloadRenderer.maximumPayloadBytes) { self.limit = limit }

    /// The outcome of rendering.
    public enum Outcome: Hashable, Sendable {
        /// The payload bytes and the receiver's badge counter after the push.
        case payload([UInt8], badgeCounter: Int)
        /// Custom keys and fixed parts alone exceed the limit.
        case tooLarge
    }

    /// The alert a receiver sees for a message (before any shortening).
    /// - Parameters:
    ///   - message: the message.
    ///   - sender: the sender's state, when known (its name card).
    ///   - receiver: the receiver's state.
    ///   - profile: the output shape.
    ///   - app: the app's configuration (templates).
    ///   - derivedContent: the message's ``PushMessage/derivedContent`` when already known.
    public func alert(
        for message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, app: AppConfiguration, derivedContent: String? = nil
    ) -> Alert {
        var body: BodyText
        if receiver.displayStyle == .simpleBanner {
            body = BodyText(profile.genericBody)
        } else {
            body = summaryText(message, sender: sender, receiver: receiver, profile: profile, derivedContent: derivedContent)
        }
        var title = message.pushTitle
        if let v = message.pushContent { body = BodyText(v) }
        if let v = message.alertBody { body = BodyText(v) }
        if let v = message.alertTitle { title = v }
        if let reference = message.template, let template = app.template(named: reference.name) {
            if let pattern = template.contentPattern { body = BodyText(PushTemplate.fill(pattern, with: reference.contentArgs)) }
            if let pattern = template.titlePattern { title = PushTemplate.fill(pattern, with: reference.titleArgs) }
        }
        var loc = LocalizationKeys()
        if let key = message.localization.titleKey {
            loc.titleKey = key
            loc.titleArgs = message.localization.titleArgs
        }
        if let key = message.localization.bodyKey {
            loc.bodyKey = key
            loc.bodyArgs = message.localization.bodyArgs
        }
        return Alert(title: title, subtitle: message.alertSubtitle, text: body, localization: loc)
    }

    /// The content a receiver sees: the override, else a translation in the preferred language, else the parts.
    /// - Parameters:
    ///   - message: the message.
    ///   - receiver: the receiver's state (its language).
    ///   - derivedContent: the message's ``PushMessage/derivedContent`` when already known.
    public func content(of message: PushMessage, for receiver: UserState, derivedContent: String? = nil) -> String {
        if let override = message.contentOverride { return override }
        if let language = receiver.language, let translated = message.translations[language] { return translated }
        return derivedContent ?? message.derivedContent
    }

    /// The `MessageSummary` body for a profile.
    /// - Parameters:
    ///   - message: the message.
    ///   - sender: the sender's state, when known (its name card).
    ///   - receiver: the receiver's state.
    ///   - profile: the output shape.
    ///   - derivedContent: the message's ``PushMessage/derivedContent`` when already known.
    public func summary(_ message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, derivedContent: String? = nil) -> String {
        summaryText(message, sender: sender, receiver: receiver, profile: profile, derivedContent: derivedContent).joined
    }

    /// ``summary(_:sender:receiver:profile:derivedContent:)`` as its pieces, not yet joined.
    func summaryText(_ message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, derivedContent: String?) -> BodyText {
        let content = content(of: message, for: receiver, derivedContent: derivedContent)
        let displayName = sender?.displayName.flatMap { $0.isEmpty ? nil : $0 }
        switch profile.bodyFormat {
        case .nameColonContent:
            return BodyText(.colon, name: displayName ?? message.sender, content: content)
        case .tencent:
            var name = displayName
            if message.kind == .group, let group = message.groupId, let card = sender?.nameCards[group], !card.isEmpty { name = card }
            let groupName = message.kind == .group ? message.groupName.flatMap { $0.isEmpty ? nil : $0 } : nil
            switch (name, groupName) {
            case (let n?, let g?): return BodyText(.grouped, name: n, group: g, content: content)
            case (nil, let g?): return BodyText(.groupOnly, group: g, content: content)
            case (let n?, nil): return BodyText(.spacedColon, name: n, content: content)
            case (nil, nil): return BodyText(content)
            }
        }
    }

    /// The sound to play, or `nil` to omit the key.
    public func sound(for message: PushMessage, receiver: UserState) -> String? {
        let chosen: String
        switch message.sound {
        case .silent: return nil
        case .named(let name): chosen = name
        case nil:
            let preset = message.kind == .group ? receiver.groupSound : receiver.oneToOneSound
            chosen = (preset?.isEmpty == false) ? preset! : "default"
        }
        return chosen == PayloadRenderer.noSound ? nil : chosen
    }

    /// Renders the payload, shortening the body (then the title) to fit.
    ///
    /// This is the reference path: every part is written for this one receiver. ``PreparedPush``
    /// writes the same bytes from parts shared by the receivers of one message.
    public func render(_ message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, app: AppConfiguration) -> Outcome {
        let alert = alert(for: message, sender: sender, receiver: receiver, profile: profile, app: app)
        let counter = message.ignoreBadge ? receiver.badge : receiver.badge + 1
        let parts = Parts(message: message, sound: sound(for: message, receiver: receiver), profile: profile)
        return parts.render(alert, badge: message.badgeOverride ?? counter, receiver: receiver.user, limit: limit)
            .map { .payload($0, badgeCounter: counter) } ?? .tooLarge
    }

    /// The longest prefix of whole grapheme clusters of `text`, followed by "…", whose JSON string
    /// literal takes at most `budget` bytes; `nil` if not even "…" fits.
    public static func shortened(_ text: String, toLiteralBytes budget: Int) -> String? {
        let ellipsisBytes = 3
        var used = 2 + ellipsisBytes
        guard used <= budget else { return nil }
        // The longest prefix of whole scalars whose literal fits, costed from the UTF-8 bytes…
        var text = text
        let cutOffset = text.withUTF8 { utf8 -> Int in
            guard let base = utf8.baseAddress else { return 0 }
            var cut = 0
            var index = 0
            while index < utf8.count {
                // Runs that need no escape cost a byte a byte: taken whole while they fit, then
                // back to the scalar boundary at or before where they end.
                let plain = JSONWriter.plainPrefix(base + index, count: Swift.min(utf8.count - index, budget - used))
                if plain > 0 {
                    index += plain
                    used += plain
                    while index < utf8.count && utf8[index] & 0xC0 == 0x80 {
                        index -= 1
                        used -= 1
                    }
                    cut = index
                    if index >= utf8.count { break }
                }
                let lead = utf8[index]
                let length = lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
                let cost = lead < 0x80 ? JSONWriter.encodedLength(ofByte: lead) : length
                if used + cost > budget { break }
                used += cost
                index += length
                cut = index
            }
            return cut
        }
        let cut = text.utf8.index(text.utf8.startIndex, offsetBy: cutOffset)
        // …then back to the last grapheme-cluster boundary of the whole text at or before it
        // (only the scalars at the cut are examined, not every cluster before it).
        var end = cut
        while end > text.startIndex && end.samePosition(in: text) == nil {
            end = text.unicodeScalars.index(before: end)
        }
        return String(text[..<end]) + ellipsis
    }

    /// The request headers for a device: push type, priority and topic.
    public static func headers(for device: Device) -> [(name: String, value: String)] {
        [("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-topic", device.certificate.bundleId)]
    }
}
