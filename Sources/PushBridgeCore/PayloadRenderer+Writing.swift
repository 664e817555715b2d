import PushBridgeJSON

// Writing a payload: its receiver-independent parts, the alert around them, shortening to the limit,
// and where the receiver's own bytes are (for a class's template).
extension PayloadRenderer {
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
