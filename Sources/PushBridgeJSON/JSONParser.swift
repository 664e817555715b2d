/// A strict RFC 8259 parser that reports errors with the JSON pointer of the value being read.
///
/// Rejected (beyond what any parser rejects): trailing commas, comments, single quotes, duplicate
/// keys, `NaN`/`Infinity`, leading `+` or zeros, `1.`, raw control characters in strings, lone
/// surrogate escapes, invalid UTF-8, integers that do not fit in 64 signed bits, numbers that
/// overflow a double, and anything after the top-level value.
public struct JSONParser {
    /// The deepest nesting accepted.
    public static let maximumDepth = 512

    /// Parses UTF-8 bytes as one strict JSON document.
    /// - Parameter bytes: the document.
    /// - Throws: ``InputError`` with code ``InputError/Code/malformedJSON``.
    public static func parse<Bytes: Collection>(_ bytes: Bytes) throws -> JSONValue where Bytes.Element == UInt8 {
        try withBuffer(bytes) { try parse(buffer: $0) }
    }

    /// Parses a string as one strict JSON document.
    public static func parse(_ text: String) throws -> JSONValue {
        var text = text
        return try text.withUTF8 { try parse(buffer: $0) }
    }

    /// Checks that bytes are one strict JSON document without building the value.
    public static func validate<Bytes: Collection>(_ bytes: Bytes) throws where Bytes.Element == UInt8 {
        try withBuffer(bytes) { buffer in
            var scanner = Scanner(buffer, build: false)
            _ = try scanner.document()
        }
    }

    /// Runs `body` over the bytes' contiguous storage, copying them only when there is none.
    static func withBuffer<Bytes: Collection, R>(_ bytes: Bytes, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R
    where Bytes.Element == UInt8 {
        if let result = try bytes.withContiguousStorageIfAvailable(body) { return result }
        return try Array(bytes).withUnsafeBufferPointer(body)
    }

    static func parse(buffer: UnsafeBufferPointer<UInt8>) throws -> JSONValue {
        var parser = Scanner(buffer, build: true)
        return try parser.document()
    }
}

private struct Scanner {
    let bytes: UnsafeBufferPointer<UInt8>
    let build: Bool
    var index = 0
    var path: [String] = []
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, build: Bool) {
        self.bytes = bytes
        self.build = build
    }

    mutating func document() throws -> JSONValue {
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
            throw error("a JSON value", found: "a byte order mark")
        }
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw error("the end of the document", found: describeHere())
        }
        return value
    }

    // MARK: Errors

    func location(_ offset: Int) -> String {
        var line = 1
        var column = 1
        var i = 0
        while i < offset && i < bytes.count {
            if bytes[i] == UInt8(ascii: "\n") { line += 1; column = 1 } else if bytes[i] & 0xC0 != 0x80 { column += 1 }
            i += 1
        }
        return "line \(line) column \(column)"
    }

    func describeHere() -> String {
        guard index < bytes.count else { return "the end of the input (\(location(index)))" }
        let b = bytes[index]
        let shown: String
        if b >= 0x20 && b < 0x7F {
            var end = index
            while end < bytes.count && end < index + 12 && bytes[end] >= 0x21 && bytes[end] < 0x7F { end += 1 }
            shown = "'" + String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<max(end, index + 1)]), as: UTF8.self) + "'"
        } else {
            shown = "byte 0x" + String(b, radix: 16, uppercase: true)
        }
        return "\(shown) at \(location(index))"
    }

    func error(_ expected: String, found: String? = nil) -> InputError {
        InputError(.malformedJSON, at: JSONPointer(tokens: path), expected: expected, found: found ?? describeHere())
    }

    // MARK: Grammar

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws -> JSONValue {
        guard index < bytes.count else { throw error("a JSON value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString(materialize: build))
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        case UInt8(ascii: "'"): throw error("a JSON value (strings take double quotes)")
        case UInt8(ascii: "/"): throw error("a JSON value (comments are not JSON)")
        default: throw error("a JSON value")
        }
    }

    mutating func literal(_ word: StaticString) throws {
        let count = word.utf8CodeUnitCount
        let start = word.utf8Start
        guard index + count <= bytes.count else { throw error("'\(word)'") }
        for i in 0..<count where bytes[index + i] != start[i] { throw error("'\(word)'") }
        index += count
        if index < bytes.count, isIdentifierByte(bytes[index]) { throw error("'\(word)'") }
    }

    func isIdentifierByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_")
    }

    mutating func enter() throws {
        depth += 1
        if depth > JSONParser.maximumDepth { throw error("at most \(JSONParser.maximumDepth) levels of nesting") }
    }

    mutating func parseObject() throws -> JSONValue {
        try enter()
        index += 1  // {
        var entries: [(key: String, value: JSONValue)] = []
        var seen = Set<String>()
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(JSONObject())
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                    throw error("another member after ',' (trailing commas are not JSON)")
                }
                throw error("a member name in double quotes")
            }
            let keyStart = index
            let key = try parseString(materialize: true)
            if !seen.insert(key).inserted {
                let saved = index
                index = keyStart
                let e = InputError(
                    .malformedJSON, at: JSONPointer(tokens: path + [key]),
                    expected: "each member name once in an object", found: "a duplicate of \"\(key)\" at \(location(keyStart))")
                index = saved
                throw e
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("':' after the member name") }
            index += 1
            skipWhitespace()
            path.append(key)
            let value = try parseValue()
            path.removeLast()
            if build { entries.append((key, value)) }
            skipWhitespace()
            guard index < bytes.count else { throw error("',' or '}'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; break }
            throw error("',' or '}'")
        }
        depth -= 1
        return build ? .object(JSONObject(uniqueEntries: entries)) : .null
    }

    mutating func parseArray() throws -> JSONValue {
        try enter()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array([])
        }
        var position = 0
        while true {
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                throw error("another element after ',' (trailing commas are not JSON)")
            }
            path.append(String(position))
            let value = try parseValue()
            path.removeLast()
            if build { elements.append(value) }
            position += 1
            skipWhitespace()
            guard index < bytes.count else { throw error("',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; break }
            throw error("',' or ']'")
        }
        depth -= 1
        return build ? .array(elements) : .null
    }

    mutating func parseString(materialize: Bool) throws -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                let s = materialize ? String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self) : ""
                index += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw error("a string without raw control characters (escape them)") }
            if b >= 0x80 { try skipUTF8Sequence() } else { index += 1 }
        }
        // Slow path with escapes.
        var out: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let b = bytes[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return materialize ? String(decoding: out, as: UTF8.self) : ""
            }
            if b < 0x20 { throw error("a string without raw control characters (escape them)") }
            if b == UInt8(ascii: "\\") {
                index += 1
                guard index < bytes.count else { throw error("an escape sequence") }
                let e = bytes[index]
                index += 1
                switch e {
                case UInt8(ascii: "\""): out.append(0x22)
                case UInt8(ascii: "\\"): out.append(0x5C)
                case UInt8(ascii: "/"): out.append(0x2F)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                        else { throw error("a low surrogate escape after a high surrogate") }
                        index += 2
                        let low = try hex4()
                        guard low >= 0xDC00 && low <= 0xDFFF else { throw error("a low surrogate escape after a high surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        index -= 6
                        throw error("a high surrogate before a low surrogate escape")
                    }
                    appendUTF8(scalar, to: &out)
                default:
                    index -= 1
                    throw error("a valid escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)")
                }
                continue
            }
            if b >= 0x80 {
                let s = index
                try skipUTF8Sequence()
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[s..<index]))
            } else {
                out.append(b)
                index += 1
            }
        }
        throw error("a closing '\"'")
    }

    mutating func hex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("four hex digits after \\u") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = bytes[index]
            let digit: UInt32
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(b - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(b - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(b - UInt8(ascii: "A") + 10)
            default: throw error("four hex digits after \\u")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    func appendUTF8(_ scalar: UInt32, to out: inout [UInt8]) {
        switch scalar {
        case 0..<0x80: out.append(UInt8(scalar))
        case 0x80..<0x800:
            out.append(UInt8(0xC0 | (scalar >> 6)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        case 0x800..<0x10000:
            out.append(UInt8(0xE0 | (scalar >> 12)))
            out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        default:
            out.append(UInt8(0xF0 | (scalar >> 18)))
            out.append(UInt8(0x80 | ((scalar >> 12) & 0x3F)))
            out.append(UInt8(0x80 | ((scalar >> 6) & 0x3F)))
            out.append(UInt8(0x80 | (scalar & 0x3F)))
        }
    }

    /// Validates one multi-byte UTF-8 sequence starting at `index` and moves past it.
    mutating func skipUTF8Sequence() throws {
        let b0 = bytes[index]
        var need = 0
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED: need = 2; hi = 0x9F
        case 0xF0: need = 3; lo = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; hi = 0x8F
        default: throw error("valid UTF-8")
        }
        guard index + need < bytes.count else { throw error("valid UTF-8") }
        let b1 = bytes[index + 1]
        guard b1 >= lo && b1 <= hi else { throw error("valid UTF-8") }
        for k in 2...max(2, need) where k <= need {
            let b = bytes[index + k]
            guard b & 0xC0 == 0x80 else { throw error("valid UTF-8") }
        }
        index += need + 1
    }

    mutating func parseNumber() throws -> JSONValue {
        let start = index
        var isInteger = true
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw error("a digit") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw error("no leading zeros in a number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("a digit after the decimal point") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("a digit in the exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, isIdentifierByte(bytes[index]) || bytes[index] == UInt8(ascii: ".") {
            throw error("the end of the number")
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        if isInteger {
            guard let value = Int64(text) else {
                let saved = index
                index = start
                defer { index = saved }
                throw error("an integer that fits in 64 signed bits", found: "\(text) at \(location(start))")
            }
            return .int(value)
        }
        guard let value = Double(text), value.isFinite else {
            index = start
            throw error("a number within the range of a double", found: "\(text) at \(location(start))")
        }
        return .double(value)
    }

    func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
}

extension JSONObject {
    /// Builds an object from entries whose keys are known to be distinct (skips the lookup per key).
    init(uniqueEntries: [(key: String, value: JSONValue)]) {
        self.init()
        self.appendUnique(contentsOf: uniqueEntries)
    }
}
