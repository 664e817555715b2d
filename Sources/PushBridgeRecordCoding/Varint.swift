/// LEB128 varints and zigzag signed integers: the numbers of every binary format PushBridge
/// stores (the sent-message record, its receiver roll and the badge log).
///
/// A varint is 7 bits a byte, lowest first, the high bit set on every byte but the last; a signed
/// integer is written as the varint of its zigzag form (0, -1, 1, -2 … as 0, 1, 2, 3 …), so small
/// negative numbers stay short.
package enum Varint {
    /// The zigzag form of `value`.
    @inlinable
    package static func zigzag(_ value: Int64) -> UInt64 { UInt64(bitPattern: (value << 1) ^ (value >> 63)) }

    /// The signed integer whose zigzag form is `bits`.
    @inlinable
    package static func unzigzag(_ bits: UInt64) -> Int64 { Int64(bitPattern: bits >> 1) ^ -Int64(bitPattern: bits & 1) }

    /// The most bytes one varint takes.
    package static let maximumLength = 10

    /// Writes `value` into `out` from `at` on (room for ``maximumLength`` bytes is the caller's).
    /// - Parameters:
    ///   - value: the number.
    ///   - out: the buffer written into.
    ///   - at: where the varint starts; moved past it.
    @inlinable
    package static func write(_ value: UInt64, into out: UnsafeMutableBufferPointer<UInt8>, at: inout Int) {
        var value = value
        while value >= 0x80 {
            out[at] = UInt8(truncatingIfNeeded: value) | 0x80
            at &+= 1
            value >>= 7
        }
        out[at] = UInt8(value)
        at &+= 1
    }

    /// Appends `value` to `bytes`.
    @inlinable
    package static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Reads the varint that starts at `at` in `bytes`.
    /// - Parameters:
    ///   - bytes: the bytes read.
    ///   - at: where the varint starts; moved past it.
    /// - Returns: the number, or `nil` when the bytes end inside it or it runs past 64 bits.
    @inlinable
    package static func read<Bytes: RandomAccessCollection>(from bytes: Bytes, at: inout Bytes.Index) -> UInt64? where Bytes.Element == UInt8 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < bytes.endIndex, shift < 64 else { return nil }
            let byte = bytes[at]
            bytes.formIndex(after: &at)
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
}
