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
    ///
    /// Its fields are kept behind one shared reference (copy-on-write), so that handing an alert
    /// from the renderer to the writer and the shortener copies one reference, not every string.
    public struct Alert: Hashable, Sendable {
        struct Fields: Hashable, Sendable {
            var title: String?
            var subtitle: String?
            var text: BodyText
            var localization: LocalizationKeys
        }

        var storage: CopyOnWrite<Fields>

        public var title: String? {
            _read { yield storage.value.title }
            _modify { yield &storage.value.title }
        }
        public var subtitle: String? {
            _read { yield storage.value.subtitle }
            _modify { yield &storage.value.subtitle }
        }
        /// The body text (joined from its pieces when read: a payload writes the pieces).
        public var body: String {
            get { storage.value.text.joined }
            set { storage.value.text = BodyText(newValue) }
        }
        public var localization: LocalizationKeys {
            _read { yield storage.value.localization }
            _modify { yield &storage.value.localization }
        }
        /// The body as the pieces it is made of.
        var text: BodyText { _read { yield storage.value.text } }

        init(title: String?, subtitle: String?, text: BodyText, localization: LocalizationKeys) {
            storage = CopyOnWrite(Fields(title: title, subtitle: subtitle, text: text, localization: localization))
        }
    }

    /// An alert body as its pieces (a sender's name, a group's name, the content) and the profile's
    /// separators between them: written into a payload piece by piece, never joined into one string
    /// first (JSON escapes each byte alone, so the pieces' escapes are the joined text's).
    struct BodyText: Hashable, Sendable {
        enum Form: Sendable {
            /// `content`
            case plain
            /// `name:content` (Easemob and Agora)
            case colon
            /// `name: content` (Tencent)
            case spacedColon
            /// `name (group): content` (Tencent)
            case grouped
            /// `(group): content` (Tencent)
            case groupOnly
        }

        var form: Form
        var name = ""
        var group = ""
        var content: String

        /// A body that is one text.
        init(_ text: String) {
            form = .plain
            content = text
        }

        init(_ form: Form, name: String = "", group: String = "", content: String) {
            self.form = form
            self.name = name
            self.group = group
            self.content = content
        }

        /// Equal when the joined texts are (however they are cut into pieces).
        static func == (lhs: BodyText, rhs: BodyText) -> Bool { lhs.joined == rhs.joined }

        func hash(into hasher: inout Hasher) { hasher.combine(joined) }

        /// The body as one string.
        var joined: String {
            switch form {
            case .plain: return content
            case .colon: return name + ":" + content
            case .spacedColon: return name + ": " + content
            case .grouped: return name + " (" + group + "): " + content
            case .groupOnly: return "(" + group + "): " + content
            }
        }

        /// The body's size in UTF-8 bytes.
        var utf8Count: Int {
            switch form {
            case .plain: return content.utf8.count
            case .colon: return name.utf8.count + 1 + content.utf8.count
            case .spacedColon: return name.utf8.count + 2 + content.utf8.count
            case .grouped: return name.utf8.count + group.utf8.count + 5 + content.utf8.count
            case .groupOnly: return group.utf8.count + 4 + content.utf8.count
            }
        }

        /// Writes the body as one JSON string literal.
        func write(into w: inout JSONWriter) {
            if form == .plain { return w.string(content) }
            w.byte(0x22)
            switch form {
            case .plain: break
            case .colon:
                w.stringContent(name)
                w.byte(UInt8(ascii: ":"))
            case .spacedColon:
                w.stringContent(name)
                w.raw(": ")
            case .grouped:
                w.stringContent(name)
                w.raw(" (")
                w.stringContent(group)
                w.raw("): ")
            case .groupOnly:
                w.raw("(")
                w.stringContent(group)
                w.raw("): ")
            }
            w.stringContent(content)
            w.byte(0x22)
        }
    }

    /// The alert a receiver sees for a message (before any shortening).
    /// - Parameter derivedContent: the message's ``PushMessage/derivedContent`` when already known.
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
    /// - Parameter derivedContent: the message's ``PushMessage/derivedContent`` when already known.
    public func content(of message: PushMessage, for receiver: UserState, derivedContent: String? = nil) -> String {
        if let override = message.contentOverride { return override }
        if let language = receiver.language, let translated = message.translations[language] { return translated }
        return derivedContent ?? message.derivedContent
    }

    /// The `MessageSummary` body for a profile.
    /// - Parameter derivedContent: the message's ``PushMessage/derivedContent`` when already known.
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

    /// Where a written payload holds the receiver's own bytes (for another receiver's to replace),
    /// and the alert's body and title literals (for shortening).
    struct Marks: Sendable {
        /// The badge digits (`nil`: the payload has no per-receiver badge).
        var badge: Range<Int>?
        /// The receiver's id literal (`nil`: the profile writes none).
        var receiver: Range<Int>?
        /// The body's string literal, quotes included.
        var body = 0..<0
        /// The title's string literal, quotes included (empty: no title).
        var title = 0..<0
    }

    /// The parts of a payload that do not depend on the receiver, and how to write it around the alert.
    struct Parts: Sendable {
        /// Whether `aps` has a `badge` key.
        var hasBadge: Bool
        var sound: String?
        var category: String?
        var mutableContent: Bool
        /// The message whose custom keys follow `aps`, in the profile's shape.
        var message: PushMessage
        var customKeys: Profile.CustomKeys
        var form: Profile.AlertForm

        /// Whether the custom keys end with the receiver's id (`,"t":…`, Easemob).
        var receiverKey: Bool { customKeys == .easemob }

        /// - Parameters:
        ///   - message: the message.
        ///   - sound: the sound the receiver hears (``PayloadRenderer/sound(for:receiver:)``).
        ///   - profile: the output shape.
        init(message: PushMessage, sound: String?, profile: Profile) {
            hasBadge = !message.ignoreBadge
            self.sound = sound
            category = message.category
            mutableContent = message.mutableContent
            form = profile.alertForm
            self.message = message
            customKeys = profile.customKeys
        }

        /// Writes the custom keys that come before the receiver's (sorted): `,"e":…,"f":…`. They
        /// are the message's own, written where each payload is (a few short strings: cheaper than
        /// keeping them written apart and copying them in).
        func writeCustomKeys(into w: inout JSONWriter) {
            switch customKeys {
            case .easemob:
                if let e = message.extensionValue {
                    w.raw(",\"e\":")
                    w.write(e)
                }
                w.raw(",\"f\":")
                w.string(message.sender)
                if message.kind == .group, let g = message.groupId {
                    w.raw(",\"g\":")
                    w.string(g)
                }
                w.raw(",\"m\":")
                w.string(message.id)
            case .tencent:
                if let e = message.extensionValue {
                    if case .string(let text) = e {
                        if !text.isEmpty {
                            w.raw(",\"ext\":")
                            w.string(text)
                        }
                    } else {
                        // The value's compact JSON text as a string literal (written, then escaped).
                        w.raw(",\"ext\":")
                        var text = JSONWriter(capacity: 128)
                        text.write(e)
                        text.withBytes { w.literal($0) }
                    }
                }
            }
        }

        /// Writes the payload and shortens the body (then the title) to fit `limit`.
        /// - Parameters:
        ///   - alert: the alert before shortening.
        ///   - badge: the badge value shown (ignored when the payload has none).
        ///   - receiver: the receiver's id.
        ///   - limit: the size limit in bytes.
        /// - Returns: the payload, `nil` when it cannot fit.
        func render(_ alert: borrowing Alert, badge: Int, receiver: String, limit: Int) -> [UInt8]? {
            if alert.text.utf8Count + 2 > limit {
                // Its body alone does not fit: shortened at once, from the size of the payload around
                // an empty body (all the shortener reads of the payload written whole).
                var empty = copy alert
                empty.body = ""
                var w = JSONWriter(capacity: 512)
                let marks = write(empty, badge: badge, receiver: receiver, into: &w)
                return shortened(alert, badge: badge, receiver: receiver, limit: limit, full: w.count, marks: marks)
            }
            var w = JSONWriter(capacity: 512 + alert.text.utf8Count)
            let marks = write(alert, badge: badge, receiver: receiver, into: &w)
            if w.count <= limit { return w.bytes }
            return shortened(alert, badge: badge, receiver: receiver, limit: limit, full: w.count, marks: marks)
        }

        /// Writes the payload of an alert that does not fit `limit`, its body (then its title) shortened.
        /// - Parameters:
        ///   - alert: the alert before shortening.
        ///   - badge: the badge value shown (ignored when the payload has none).
        ///   - receiver: the receiver's id.
        ///   - limit: the size limit in bytes.
        ///   - full: the size of the payload written with `alert` as it is.
        ///   - marks: where that payload has its body and title literals.
        /// - Returns: the payload, `nil` when it cannot fit.
        func shortened(_ alert: borrowing Alert, badge: Int, receiver: String, limit: Int, full: Int, marks: Marks) -> [UInt8]? {
            // Shorten the body: the longest grapheme prefix such that prefix + "…" fits. The other
            // bytes stay as they are, so the budget is what the written body literal leaves.
            var alert = copy alert
            var w = JSONWriter(capacity: limit + 64)
            let bodyBudget = limit - full + marks.body.count
            if let body = PayloadRenderer.shortened(alert.body, toLiteralBytes: bodyBudget) {
                alert.body = body
                write(alert, badge: badge, receiver: receiver, into: &w)
                return w.bytes
            }
            // Even "…" alone does not fit as the body: keep "…" and shorten the title.
            guard let title = alert.title else { return nil }
            let ellipsisLiteral = 2 + PayloadRenderer.ellipsis.utf8.count
            let titleBudget = limit - full + marks.body.count - ellipsisLiteral + marks.title.count
            guard let shortenedTitle = PayloadRenderer.shortened(title, toLiteralBytes: titleBudget) else { return nil }
            alert.body = PayloadRenderer.ellipsis
            alert.title = shortenedTitle
            write(alert, badge: badge, receiver: receiver, into: &w)
            return w.count <= limit ? w.bytes : nil
        }

        /// Writes the payload and marks where the receiver's own bytes are; `badgeVaries` says
        /// whether the badge is the receiver's counter (not an override).
        @discardableResult
        func write(_ alert: borrowing Alert, badge: Int, receiver: String, badgeVaries: Bool = true, into w: inout JSONWriter) -> Marks {
            var marks = Marks()
            w.raw("{\"aps\":{\"alert\":")
            let bodyOnly = alert.title == nil && alert.subtitle == nil && alert.localization.isEmpty
            if form == .stringWhenBodyOnly && bodyOnly {
                let start = w.count
                alert.text.write(into: &w)
                marks.body = start..<w.count
            } else {
                w.raw("{")
                if let title = alert.title {
                    w.raw("\"title\":")
                    let start = w.count
                    w.string(title)
                    marks.title = start..<w.count
                    w.raw(",")
                }
                if let subtitle = alert.subtitle {
                    w.raw("\"subtitle\":")
                    w.string(subtitle)
                    w.raw(",")
                }
                w.raw("\"body\":")
                let start = w.count
                alert.text.write(into: &w)
                marks.body = start..<w.count
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
            if hasBadge {
                w.raw(",\"badge\":")
                let start = w.count
                w.integer(badge)
                if badgeVaries { marks.badge = start..<w.count }
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
            writeCustomKeys(into: &w)
            if receiverKey {
                w.raw(",\"t\":")
                let start = w.count
                w.string(receiver)
                marks.receiver = start..<w.count
            }
            w.raw("}")
            return marks
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
