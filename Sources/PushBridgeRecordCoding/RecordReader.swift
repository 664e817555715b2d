/// Reads what a ``RecordWriter`` wrote, bounded by the bytes at hand: every count and length is
/// checked against what is left, and anything else is a ``RecordDamage`` naming what was found.
package struct RecordReader {
    /// The bytes read.
    package let bytes: [UInt8]
    /// Where the next read starts.
    package var offset = 0

    /// - Parameter bytes: the bytes to read, from the start.
    @inlinable
    package init(bytes: [UInt8]) { self.bytes = bytes }

    /// Damage found at the current offset.
    @inlinable
    package func damage(_ what: String) -> RecordDamage { RecordDamage(what, at: offset) }

    /// The next `count` bytes.
    @inlinable
    package mutating func take(_ count: Int) throws(RecordDamage) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw damage("it ends early") }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// The next byte.
    @inlinable
    package mutating func byte() throws(RecordDamage) -> UInt8 {
        guard offset < bytes.count else { throw damage("it ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// An unsigned LEB128 varint.
    @inlinable
    package mutating func varint() throws(RecordDamage) -> UInt64 {
        guard let value = Varint.read(from: bytes, at: &offset) else {
            throw damage(offset >= bytes.count ? "it ends early" : "a number too long")
        }
        return value
    }

    /// A zigzag varint.
    @inlinable
    package mutating func signed() throws(RecordDamage) -> Int64 { Varint.unzigzag(try varint()) }

    /// A 64-bit little-endian integer (the first record format's).
    @inlinable
    package mutating func fixed() throws(RecordDamage) -> UInt64 {
        try take(8).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A 32-bit little-endian length (the first record format's).
    @inlinable
    package mutating func length32() throws(RecordDamage) -> UInt64 {
        try take(4).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// A count of things that follow, bounded by the bytes left (each takes at least one byte).
    @inlinable
    package func count(of value: UInt64) throws(RecordDamage) -> Int {
        guard value <= UInt64(bytes.count - offset) else { throw damage("a count of \(value)") }
        return Int(value)
    }

    /// A text of `length` UTF-8 bytes.
    @inlinable
    package mutating func string(length: UInt64) throws(RecordDamage) -> String {
        guard let text = String(validating: try take(count(of: length)), as: UTF8.self) else { throw damage("text that is not UTF-8") }
        return text
    }

    /// An optional text written by ``RecordWriter/optional(_:)``, its length read by `length`.
    @inlinable
    package mutating func optional(length: (inout RecordReader) throws(RecordDamage) -> UInt64) throws(RecordDamage) -> String? {
        switch try byte() {
        case 0: return nil
        case 1: return try string(length: length(&self))
        default: throw damage("an optional text marker")
        }
    }

    /// A place in a template written by ``RecordWriter/mark(_:)``.
    @inlinable
    package mutating func mark() throws(RecordDamage) -> Range<Int>? {
        let start = try varint()
        guard start > 0 else { return nil }
        let length = try varint()
        guard start - 1 <= UInt64(bytes.count), length <= UInt64(bytes.count) else { throw damage("a place in a template") }
        return Int(start - 1)..<Int(start - 1 + length)
    }

    /// A device token written by ``RecordWriter/token(_:)``.
    @inlinable
    package mutating func token() throws(RecordDamage) -> String {
        let header = try varint()
        let raw = try take(count(of: header >> 1))
        if header & 1 == 0 {
            guard let text = String(validating: raw, as: UTF8.self) else { throw damage("a token that is not UTF-8") }
            return text
        }
        let digits: [UInt8] = Array("0123456789abcdef".utf8)
        return String(unsafeUninitializedCapacity: raw.count * 2) { buffer in
            var i = 0
            for b in raw {
                buffer[i] = digits[Int(b >> 4)]
                buffer[i + 1] = digits[Int(b & 0x0f)]
                i += 2
            }
            return i
        }
    }

    /// A payload written by ``RecordWriter/difference(_:from:)``.
    @inlinable
    package mutating func difference(from previous: [UInt8]) throws(RecordDamage) -> [UInt8] {
        let prefix = try varint()
        let suffix = try varint()
        guard prefix <= UInt64(previous.count), suffix <= UInt64(previous.count) - prefix else { throw damage("a payload difference") }
        let middle = try take(count(of: varint()))
        var payload: [UInt8] = []
        payload.reserveCapacity(Int(prefix) + middle.count + Int(suffix))
        payload += previous[0..<Int(prefix)]
        payload += middle
        payload += previous[(previous.count - Int(suffix))...]
        return payload
    }
}
