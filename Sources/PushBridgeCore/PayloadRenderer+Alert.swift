import PushBridgeJSON

// The alert a payload carries, and its body as the pieces it is written from.
extension PayloadRenderer {
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
}
