import PushBridgeJSON

/// Renders the APNs payload for one receiver with one profile (SPEC §5).
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

    /// The alert text before it is written.
    public struct Alert: Hashable, Sendable {
        public var title: String?
        public var subtitle: String?
        public var body: String
        public var localization: LocalizationKeys
    }

    /// The alert a receiver sees for a message (before any shortening).
    public func alert(for message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, app: AppConfiguration) -> Alert {
        var body: String
        if receiver.displayStyle == .simpleBanner {
            body = profile.genericBody
        } else {
            body = summary(message, sender: sender, receiver: receiver, profile: profile)
        }
        var title = message.pushTitle
        if let v = message.pushContent { body = v }
        if let v = message.alertBody { body = v }
        if let v = message.alertTitle { title = v }
        if let reference = message.template, let template = app.template(named: reference.name) {
            if let pattern = template.contentPattern { body = PushTemplate.fill(pattern, with: reference.contentArgs) }
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
        return Alert(title: title, subtitle: message.alertSubtitle, body: body, localization: loc)
    }

    /// The content a receiver sees: the override, else a translation in the preferred language, else the parts.
    public func content(of message: PushMessage, for receiver: UserState) -> String {
        if let override = message.contentOverride { return override }
        if let language = receiver.language, let translated = message.translations[language] { return translated }
        return message.derivedContent
    }

    /// The `MessageSummary` body for a profile.
    public func summary(_ message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile) -> String {
        let content = content(of: message, for: receiver)
        let displayName = sender?.displayName.flatMap { $0.isEmpty ? nil : $0 }
        switch profile.bodyFormat {
        case .nameColonContent:
            return (displayName ?? message.sender) + ":" + content
        case .tencent:
            var name = displayName
            if message.kind == .group, let group = message.groupId, let card = sender?.nameCards[group], !card.isEmpty { name = card }
            let groupName = message.kind == .group ? message.groupName.flatMap { $0.isEmpty ? nil : $0 } : nil
            switch (name, groupName) {
            case (let n?, let g?): return "\(n) (\(g)): \(content)"
            case (nil, let g?): return "(\(g)): \(content)"
            case (let n?, nil): return "\(n): \(content)"
            case (nil, nil): return content
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
    public func render(_ message: PushMessage, sender: UserState?, receiver: UserState, profile: Profile, app: AppConfiguration) -> Outcome {
        var alert = alert(for: message, sender: sender, receiver: receiver, profile: profile, app: app)
        let counter = message.ignoreBadge ? receiver.badge : receiver.badge + 1
        let badge: Int? = message.ignoreBadge ? nil : (message.badgeOverride ?? counter)
        let parts = Parts(
            badge: badge, sound: sound(for: message, receiver: receiver), category: message.category,
            mutableContent: message.mutableContent, custom: customKeys(message, receiver: receiver, profile: profile),
            form: profile.alertForm)

        let full = parts.write(alert)
        if full.count <= limit { return .payload(full, badgeCounter: counter) }

        // Shorten the body: keep the longest grapheme prefix such that prefix + "…" fits.
        let fullBody = alert.body
        alert.body = ""
        let bodyBudget = limit - parts.write(alert).count + 2  // bytes available for the body literal, quotes included
        if let body = PayloadRenderer.shortened(fullBody, toLiteralBytes: bodyBudget) {
            alert.body = body
            return .payload(parts.write(alert), badgeCounter: counter)
        }
        // Even "…" alone does not fit as the body: keep "…" and shorten the title.
        alert.body = PayloadRenderer.ellipsis
        guard let fullTitle = alert.title else { return .tooLarge }
        alert.title = ""
        let titleBudget = limit - parts.write(alert).count + 2
        guard let title = PayloadRenderer.shortened(fullTitle, toLiteralBytes: titleBudget) else { return .tooLarge }
        alert.title = title
        let bytes = parts.write(alert)
        return bytes.count <= limit ? .payload(bytes, badgeCounter: counter) : .tooLarge
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
            var cut = 0
            var index = 0
            while index < utf8.count {
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

    /// The profile's custom top-level keys, sorted by name.
    func customKeys(_ message: PushMessage, receiver: UserState, profile: Profile) -> [(String, JSONValue)] {
        switch profile.customKeys {
        case .easemob:
            var keys: [(String, JSONValue)] = []
            if let e = message.extensionValue { keys.append(("e", e)) }
            keys.append(("f", .string(message.sender)))
            if message.kind == .group, let g = message.groupId { keys.append(("g", .string(g))) }
            keys.append(("m", .string(message.id)))
            keys.append(("t", .string(receiver.user)))
            return keys
        case .tencent:
            guard let e = message.extensionValue else { return [] }
            let text: String
            if case .string(let s) = e { text = s } else { text = e.compactText }
            return text.isEmpty ? [] : [("ext", .string(text))]
        }
    }

    /// The request headers for a device: push type, priority and topic.
    public static func headers(for device: Device) -> [(name: String, value: String)] {
        [("apns-push-type", "alert"), ("apns-priority", "10"), ("apns-topic", device.certificate.bundleId)]
    }

    /// The fixed parts of a payload around the alert.
    struct Parts {
        var badge: Int?
        var sound: String?
        var category: String?
        var mutableContent: Bool
        var custom: [(String, JSONValue)]
        var form: Profile.AlertForm

        func write(_ alert: Alert) -> [UInt8] {
            var w = JSONWriter(capacity: 256)
            w.raw("{\"aps\":{\"alert\":")
            let bodyOnly = alert.title == nil && alert.subtitle == nil && alert.localization.isEmpty
            if form == .stringWhenBodyOnly && bodyOnly {
                w.string(alert.body)
            } else {
                w.raw("{")
                if let title = alert.title {
                    w.raw("\"title\":")
                    w.string(title)
                    w.raw(",")
                }
                if let subtitle = alert.subtitle {
                    w.raw("\"subtitle\":")
                    w.string(subtitle)
                    w.raw(",")
                }
                w.raw("\"body\":")
                w.string(alert.body)
                if let key = alert.localization.titleKey {
                    w.raw(",\"title-loc-key\":")
                    w.string(key)
                    if let args = alert.localization.titleArgs {
                        w.raw(",\"title-loc-args\":")
                        writeStrings(args, to: &w)
                    }
                }
                if let key = alert.localization.bodyKey {
                    w.raw(",\"loc-key\":")
                    w.string(key)
                    if let args = alert.localization.bodyArgs {
                        w.raw(",\"loc-args\":")
                        writeStrings(args, to: &w)
                    }
                }
                w.raw("}")
            }
            if let badge {
                w.raw(",\"badge\":")
                w.integer(badge)
            }
            if let sound {
                w.raw(",\"sound\":")
                w.string(sound)
            }
            if let category {
                w.raw(",\"category\":")
                w.string(category)
            }
            if mutableContent { w.raw(",\"mutable-content\":1") }
            w.raw("}")
            for (key, value) in custom {
                w.raw(",")
                w.string(key)
                w.raw(":")
                w.write(value)
            }
            w.raw("}")
            return w.bytes
        }

        func writeStrings(_ values: [String], to w: inout JSONWriter) {
            w.raw("[")
            for (i, v) in values.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(v)
            }
            w.raw("]")
        }
    }
}
