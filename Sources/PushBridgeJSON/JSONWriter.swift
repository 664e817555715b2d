/// Writes compact, deterministic JSON as raw UTF-8 bytes.
///
/// No spaces; non-ASCII is written as is (never `\u` escapes); `/` is not escaped; control
/// characters, `"` and `\` are escaped. Integers never gain a fraction and doubles always keep
/// one (`1.0`), so the integer/number distinction survives a round trip.
///
/// Unchecked `Sendable`: a writer changes its storage only when it holds the only reference to it
/// (copy-on-write), so writers on different threads never write the same buffer.
public struct JSONWriter: @unchecked Sendable {
    /// The bytes: written with pointer stores into one buffer that doubles when full (a copy that
    /// shares it takes a buffer of its own before it writes). One allocation: the capacity (the
    /// header) and the bytes after it.
    @usableFromInline final class Storage: ManagedBuffer<Int, UInt8> {
        /// Room for at least `capacity` bytes.
        @usableFromInline static func make(capacity: Int) -> Storage {
            let capacity = Swift.max(capacity, 16)
            return unsafeDowncast(Storage.create(minimumCapacity: capacity) { _ in capacity }, to: Storage.self)
        }

        /// Where the bytes are.
        @inlinable var base: UnsafeMutablePointer<UInt8> { withUnsafeMutablePointerToElements { $0 } }
        /// How many bytes fit.
        @inlinable var byteCapacity: Int { withUnsafeMutablePointerToHeader { $0.pointee } }
    }

    @usableFromInline var storage: Storage
    /// The number of bytes written (written by the inlinable writes).
    @usableFromInline var written = 0

    /// The number of bytes written.
    @inlinable public var count: Int { written }

    /// - Parameter capacity: the bytes to make room for at once.
    public init(capacity: Int = 256) {
        storage = Storage.make(capacity: capacity)
    }

    /// The bytes written.
    public var bytes: [UInt8] { withBytes { Array($0) } }

    /// Calls `body` with the bytes written, in place.
    /// - Parameter body: reads the bytes; they are valid only during the call.
    public func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try body(UnsafeBufferPointer(start: storage.base, count: written))
    }

    public var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }

    /// Room for `n` more bytes: where they go (the caller adds them to ``count``).
    @inlinable @inline(__always)
    mutating func room(_ n: Int) -> UnsafeMutablePointer<UInt8> {
        if _slowPath(written + n > storage.byteCapacity || !isKnownUniquelyReferenced(&storage)) { grow(n) }
        return storage.base + written
    }

    /// Moves the bytes to a buffer of its own with room for `n` more (at least twice as big when full).
    @usableFromInline mutating func grow(_ n: Int) {
        let needed = written + n
        let fresh = Storage.make(capacity: needed > storage.byteCapacity ? Swift.max(needed, storage.byteCapacity * 2) : storage.byteCapacity)
        fresh.base.update(from: storage.base, count: written)
        storage = fresh
    }

    /// Appends raw bytes.
    @inlinable @inline(__always)
    mutating func append(_ start: UnsafePointer<UInt8>, _ n: Int) {
        let p = room(n)
        UnsafeMutableRawPointer(p).copyMemory(from: start, byteCount: n)
        written += n
    }

    @inlinable @inline(__always)
    public mutating func raw(_ text: StaticString) {
        append(text.utf8Start, text.utf8CodeUnitCount)
    }

    @inlinable @inline(__always)
    public mutating func byte(_ b: UInt8) {
        room(1).pointee = b
        written += 1
    }

    /// Appends bytes already written (JSON text made elsewhere).
    @inlinable @inline(__always)
    public mutating func raw(_ written: [UInt8]) {
        written.withUnsafeBufferPointer { raw($0) }
    }

    /// Appends bytes already written (JSON text made elsewhere).
    @inlinable @inline(__always)
    public mutating func raw(_ written: ArraySlice<UInt8>) {
        written.withUnsafeBufferPointer { raw($0) }
    }

    /// Appends bytes already written (JSON text made elsewhere).
    @inlinable @inline(__always)
    public mutating func raw(_ written: UnsafeBufferPointer<UInt8>) {
        if let start = written.baseAddress { append(start, written.count) }
    }

    /// Forgets what was written, keeping the buffer's capacity (one writer reused for many payloads).
    public mutating func removeAll() {
        written = 0
        if !isKnownUniquelyReferenced(&storage) { storage = Storage.make(capacity: storage.byteCapacity) }
    }

    /// Writes a JSON string literal.
    public mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { literal($0) }
    }

    /// Writes UTF-8 bytes as a JSON string literal: runs that need no escape are copied at once.
    public mutating func literal(_ utf8: UnsafeBufferPointer<UInt8>) {
        escape(utf8, quoted: true)
    }

    /// Writes a string's characters as they are inside a JSON string literal, without the quotes:
    /// a literal can be written from several pieces (escaping works byte by byte, so the pieces'
    /// escapes are the escapes of the joined text).
    /// - Parameter value: the text.
    public mutating func stringContent(_ value: String) {
        var value = value
        value.withUTF8 { escape($0, quoted: false) }
    }

    /// Writes UTF-8 bytes escaped for a JSON string literal, between quotes when `quoted`.
    mutating func escape(_ utf8: UnsafeBufferPointer<UInt8>, quoted: Bool) {
        let n = utf8.count
        let q = quoted ? 1 : 0
        // Room for the quotes and every byte unescaped (a word at least: a short text is stored a word
        // at a time); an escape makes room for itself and the rest.
        var p = room(Swift.max(n, 8) + 2 * q)
        if quoted {
            p.pointee = 0x22
            written += 1
            p += 1
        }
        guard let base = utf8.baseAddress else {
            if quoted {
                p.pointee = 0x22
                written += 1
            }
            return
        }
        // Short texts (ids, sounds, keys) that need no escape: checked and stored a word or two at a
        // time, without a byte loop or a call to copy them.
        if n <= 16 {
            if n >= 8 {
                let first = UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)
                let last = UnsafeRawPointer(base + n - 8).loadUnaligned(as: UInt64.self)
                if JSONWriter.escapeBits(first) | JSONWriter.escapeBits(last) == 0 {
                    UnsafeMutableRawPointer(p).storeBytes(of: first, as: UInt64.self)
                    UnsafeMutableRawPointer(p + n - 8).storeBytes(of: last, as: UInt64.self)
                    if quoted { p[n] = 0x22 }
                    written += n + q
                    return
                }
            } else {
                // Byte k of the text is byte k of the word (in memory order); the bytes past it are
                // spaces for the check.
                var word: UInt64 = 0
                for k in 0..<n { word |= UInt64(base[k]) << UInt64(8 * k) }
                if JSONWriter.escapeBits(word | (0x2020_2020_2020_2020 << UInt64(8 * n))) == 0 {
                    UnsafeMutableRawPointer(p).storeBytes(of: word.littleEndian, as: UInt64.self)
                    if quoted { p[n] = 0x22 }
                    written += n + q
                    return
                }
            }
        }
        // Most texts need no escape at all: found so, they are copied whole.
        var i = JSONWriter.plainCount(base, count: n)
        if i == n {
            UnsafeMutableRawPointer(p).copyMemory(from: base, byteCount: n)
            if quoted { p[n] = 0x22 }
            written += n + q
            return
        }
        var runStart = 0
        while i < n {
            // Words at a time while none needs an escape (no control byte, quote or backslash)…
            i += JSONWriter.plainPrefix(base + i, count: n - i)
            guard i < n else { break }
            // …and a tail shorter than a word as the text's last word, overlapping what came before.
            if n >= 8 && n - i < 8 && JSONWriter.escapeBits(UnsafeRawPointer(base + n - 8).loadUnaligned(as: UInt64.self)) == 0 {
                i = n
                break
            }
            let b = base[i]
            if JSONWriter.isPlain(b) {
                i += 1
                continue
            }
            if runStart < i { append(base + runStart, i - runStart) }
            i += 1
            runStart = i
            p = room(6 + (n - i) + 1)
            var e = 2
            p[0] = 0x5C
            switch b {
            case 0x22: p[1] = 0x22
            case 0x5C: p[1] = 0x5C
            case 0x0A: p[1] = UInt8(ascii: "n")
            case 0x0D: p[1] = UInt8(ascii: "r")
            case 0x09: p[1] = UInt8(ascii: "t")
            case 0x08: p[1] = UInt8(ascii: "b")
            case 0x0C: p[1] = UInt8(ascii: "f")
            default:
                p[1] = UInt8(ascii: "u")
                p[2] = UInt8(ascii: "0")
                p[3] = UInt8(ascii: "0")
                p[4] = JSONWriter.hexDigit(b >> 4)
                p[5] = JSONWriter.hexDigit(b & 0xF)
                e = 6
            }
            written += e
        }
        if runStart < n { append(base + runStart, n - runStart) }
        if quoted { byte(0x22) }
    }

    /// Whether any of eight bytes is below 0x20, a quote or a backslash.
    @inline(__always)
    package static func needsEscape(_ word: UInt64) -> Bool { escapeBits(word) != 0 }

    /// Nonzero exactly when one of eight bytes is below 0x20, a quote or a backslash (SWAR: a byte
    /// below `n` borrows in `x - n`; a byte equal to a pattern is zero in `x ^ pattern`; bytes of 0x80
    /// and above never match, and a borrow only reaches bytes above a match).
    @inline(__always)
    package static func escapeBits(_ x: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        return ((x &- ones &* 0x20) | ((x ^ (ones &* 0x22)) &- ones) | ((x ^ (ones &* 0x5C)) &- ones)) & ~x & (ones &* 0x80)
    }

    /// The number of leading bytes of `base[0..<count]`, a multiple of eight, known to need no
    /// escape (32 bytes a step, then 8).
    @inline(__always)
    package static func plainPrefix(_ base: UnsafePointer<UInt8>, count: Int) -> Int {
        var i = 0
        while i + 32 <= count {
            let p = UnsafeRawPointer(base + i)
            let bits = escapeBits(p.loadUnaligned(as: UInt64.self)) | escapeBits(p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                | escapeBits(p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)) | escapeBits(p.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
            if bits != 0 { break }
            i += 32
        }
        while i + 8 <= count {
            if escapeBits(UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self)) != 0 { break }
            i += 8
        }
        return i
    }

    /// Whether a byte is written as it is inside a string literal.
    @inline(__always)
    static func isPlain(_ b: UInt8) -> Bool { b >= 0x20 && b != 0x22 && b != 0x5C }

    @inline(__always)
    static func hexDigit(_ nibble: UInt8) -> UInt8 { nibble < 10 ? 0x30 + nibble : 0x57 + nibble }

    /// Writes a decimal integer (not generic: digits written from the last one back).
    public mutating func integer(_ value: Int) {
        if value >= 0 && value < 10 {
            byte(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        let length = JSONWriter.decimalLength(of: value)
        JSONWriter.writeDecimal(value, length: length, to: room(length))
        written += length
    }

    /// Writes a decimal integer's `length` bytes (``decimalLength(of:)``) at `p`.
    /// - Parameters:
    ///   - value: the integer.
    ///   - length: its decimal length.
    ///   - p: where its first byte goes.
    package static func writeDecimal(_ value: Int, length: Int, to p: UnsafeMutablePointer<UInt8>) {
        var magnitude = value.magnitude
        var i = length
        repeat {
            i -= 1
            p[i] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if value < 0 { p[0] = UInt8(ascii: "-") }
    }

    /// Whether UTF-8 bytes are written as they are inside a string literal (none needs an escape).
    /// - Parameter utf8: the bytes.
    package static func isPlain(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = utf8.baseAddress else { return true }
        return plainCount(base, count: utf8.count) == utf8.count
    }

    /// The number of leading bytes of `base[0..<count]` that need no escape (`count`: none does):
    /// words at a time, then a tail shorter than a word as the text's last word, overlapping the
    /// plain bytes before it, then byte by byte.
    @inline(__always)
    static func plainCount(_ base: UnsafePointer<UInt8>, count n: Int) -> Int {
        var i = plainPrefix(base, count: n)
        if i < n && n - i < 8 && n >= 8 && escapeBits(UnsafeRawPointer(base + n - 8).loadUnaligned(as: UInt64.self)) == 0 {
            return n
        }
        while i < n, isPlain(base[i]) { i += 1 }
        return i
    }

    /// Writes a decimal integer.
    public mutating func integer<I: BinaryInteger>(_ value: I) {
        if value >= 0 && value < 10 {
            byte(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var text = String(value)
        text.withUTF8 { raw($0) }
    }

    /// Writes a double so that it reads back as a number with a fraction or exponent.
    public mutating func double(_ value: Double) {
        var text = value.description  // shortest round-trip form: "1.0", "1e-07", "1e+20"
        if !text.contains(".") && !text.contains("e") && !text.contains("E") { text += ".0" }
        text.withUTF8 { raw($0) }
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
            byte(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                write(element)
            }
            byte(UInt8(ascii: "]"))
        case .object(let object):
            byte(UInt8(ascii: "{"))
            for (i, entry) in object.entries.enumerated() {
                if i > 0 { byte(UInt8(ascii: ",")) }
                string(entry.key)
                byte(UInt8(ascii: ":"))
                write(entry.value)
            }
            byte(UInt8(ascii: "}"))
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
