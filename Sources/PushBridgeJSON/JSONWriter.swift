/// Writes compact, deterministic JSON as raw UTF-8 bytes.
///
/// No spaces; non-ASCII is written as is (never `\u` escapes); `/` is not escaped; control
/// characters, `"` and `\` are escaped. Integers never gain a fraction and doubles always keep
/// one (`1.0`), so the integer/number distinction survives a round trip.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @inline(__always)
    public mutating func byte(_ b: UInt8) { bytes.append(b) }

    /// Appends bytes already written (JSON text made elsewhere).
    @inline(__always)
    public mutating func raw(_ written: [UInt8]) { bytes.append(contentsOf: written) }

    /// Appends bytes already written (JSON text made elsewhere).
    @inline(__always)
    public mutating func raw(_ written: ArraySlice<UInt8>) { bytes.append(contentsOf: written) }

    /// The number of bytes written.
    public var count: Int { bytes.count }

    /// Forgets what was written, keeping the buffer's capacity (one writer reused for many payloads).
    public mutating func removeAll() { bytes.removeAll(keepingCapacity: true) }

    /// Writes a JSON string literal.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { literal($0) }
    }

    /// Writes UTF-8 bytes as a JSON string literal: runs that need no escape are copied at once.
    public mutating func literal(_ utf8: UnsafeBufferPointer<UInt8>) {
        bytes.append(0x22)
        guard let base = utf8.baseAddress else {
            bytes.append(0x22)
            return
        }
        let count = utf8.count
        bytes.reserveCapacity(bytes.count + count + 2)
        var runStart = 0
        var i = 0
        while i < count {
            // Eight bytes at a time while none needs an escape (no control byte, quote or backslash).
            while i + 8 <= count {
                let word = UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)
                if JSONWriter.needsEscape(word) { break }
                i += 8
            }
            guard i < count else { break }
            let b = base[i]
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                i += 1
                continue
            }
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: i - runStart)) }
            i += 1
            runStart = i
            switch b {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(0x5C); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(0x5C); bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(0x5C); bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(0x5C); bytes.append(UInt8(ascii: "f"))
            default:
                raw("\\u00")
                bytes.append(JSONWriter.hexDigit(b >> 4))
                bytes.append(JSONWriter.hexDigit(b & 0xF))
            }
        }
        if runStart < count { bytes.append(contentsOf: UnsafeBufferPointer(start: base + runStart, count: count - runStart)) }
        bytes.append(0x22)
    }

    /// Whether any of eight bytes is below 0x20, a quote or a backslash (SWAR: a byte is zero in
    /// `x` exactly when it equals the pattern; bytes of 0x80 and above never match).
    @inline(__always)
    static func needsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        @inline(__always) func hasZero(_ x: UInt64) -> Bool { (x &- ones) & ~x & highs != 0 }
        let below20 = (word &- ones &* 0x20) & ~word & highs
        return below20 != 0 || hasZero(word ^ (ones &* 0x22)) || hasZero(word ^ (ones &* 0x5C))
    }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    /// Writes a decimal integer (not generic: digits written from the end of a small stack buffer).
    public mutating func integer(_ value: Int) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 { bytes.append(UInt8(ascii: "-")) }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Writes a decimal integer.
    public mutating func integer<I: BinaryInteger>(_ value: I) {
        if value >= 0 && value < 10 {
            bytes.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        bytes.append(contentsOf: String(value).utf8)
    }

    /// Writes a double so that it reads back as a number with a fraction or exponent.
    public mutating func double(_ value: Double) {
        var text = value.description  // shortest round-trip form: "1.0", "1e-07", "1e+20"
        if !text.contains(".") && !text.contains("e") && !text.contains("E") { text += ".0" }
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes any JSON value; object members in their stored order.
    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let b): if b { raw("true") } else { raw("false") }
        case .int(let i): integer(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (i, entry) in object.entries.enumerated() {
                if i > 0 { bytes.append(UInt8(ascii: ",")) }
                string(entry.key)
                bytes.append(UInt8(ascii: ":"))
                write(entry.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// The number of bytes ``integer(_:)-(Int)`` writes for `value`.
    public static func decimalLength(of value: Int) -> Int {
        var length = value < 0 ? 2 : 1
        var magnitude = value.magnitude
        while magnitude >= 10 {
            magnitude /= 10
            length += 1
        }
        return length
    }

    /// The number of bytes `value` takes as a JSON string literal (quotes included).
    public static func encodedLength(ofString value: String) -> Int {
        var length = 2
        for b in value.utf8 { length += encodedLength(ofByte: b) }
        return length
    }

    /// The number of bytes one UTF-8 byte of a string takes inside a JSON string literal.
    @inline(__always)
    public static func encodedLength(ofByte b: UInt8) -> Int {
        switch b {
        case 0x22, 0x5C, 0x0A, 0x0D, 0x09, 0x08, 0x0C: return 2
        case 0..<0x20: return 6
        default: return 1
        }
    }
}
