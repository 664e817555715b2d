extension JSONWriter {
    /// Writes a value for people to read: two-space indentation, `": "` and `", "` separators; an
    /// array or object whose one-line form fits in `width` columns stays on one line.
    /// - Parameters:
    ///   - value: the value.
    ///   - width: the widest line an inline container may make.
    /// - Returns: the text, without a final newline.
    public static func prettyText(_ value: JSONValue, width: Int = 100) -> String {
        var out = ""
        pretty(value, indent: 0, width: width, into: &out)
        return out
    }

    static func inlineText(_ value: JSONValue) -> String {
        switch value {
        case .array(let elements): return "[" + elements.map(inlineText).joined(separator: ", ") + "]"
        case .object(let object):
            return "{" + object.entries.map { compact(.string($0.key)) + ": " + inlineText($0.value) }.joined(separator: ", ") + "}"
        default: return compact(value)
        }
    }

    static func compact(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.write(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    static func pretty(_ value: JSONValue, indent: Int, width: Int, into out: inout String) {
        let inline = inlineText(value)
        let pad = String(repeating: "  ", count: indent)
        switch value {
        case .array(let elements) where !elements.isEmpty && indent * 2 + inline.count > width:
            out += "[\n"
            for (i, element) in elements.enumerated() {
                out += pad + "  "
                pretty(element, indent: indent + 1, width: width, into: &out)
                out += i + 1 < elements.count ? ",\n" : "\n"
            }
            out += pad + "]"
        case .object(let object) where !object.isEmpty && indent * 2 + inline.count > width:
            out += "{\n"
            for (i, entry) in object.entries.enumerated() {
                out += pad + "  " + compact(.string(entry.key)) + ": "
                pretty(entry.value, indent: indent + 1, width: width, into: &out)
                out += i + 1 < object.count ? ",\n" : "\n"
            }
            out += pad + "}"
        default:
            out += inline
        }
    }
}
