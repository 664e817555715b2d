/// Writes the parts every stored binary format of PushBridge is made of: varints, zigzag signed
/// integers, length-prefixed runs and texts, optional texts, places in a template, device tokens
/// and payloads as differences.
///
/// The formats themselves (which parts, in which order) belong to their owners: the facade's
/// sent-message record and roll, the store's badge log.
package struct RecordWriter {
    /// The bytes written so far.
    package var bytes: [UInt8] = []

    @inlinable
    package init() {}

    /// An unsigned LEB128 varint.
    @inlinable
    package mutating func varint(_ value: UInt64) { Varint.append(value, to: &bytes) }

    /// A zigzag varint.
    @inlinable
    package mutating func signed(_ value: Int64) { varint(Varint.zigzag(value)) }

    /// A run of bytes: its length, then the bytes.
    @inlinable
    package mutating func run<C: Collection>(_ run: C) where C.Element == UInt8 {
        varint(UInt64(run.count))
        bytes.append(contentsOf: run)
    }

    /// A text as a run of its UTF-8 bytes.
    @inlinable
    package mutating func string(_ text: String) {
        if let written = text.utf8.withContiguousStorageIfAvailable({ run($0) }) { return written }
        run(text.utf8)
    }

    /// An optional text: `0`, or `1` and the text.
    @inlinable
    package mutating func optional(_ text: String?) {
        if let text {
            bytes.append(1)
            string(text)
        } else {
            bytes.append(0)
        }
    }

    /// A place in a template: `0` for none, else its start + 1 and its length.
    @inlinable
    package mutating func mark(_ range: Range<Int>?) {
        guard let range else { return bytes.append(0) }
        varint(UInt64(range.lowerBound) + 1)
        varint(UInt64(range.count))
    }

    /// A device token: a lower-case hex token packed into its bytes (its byte count × 2 + 1, then
    /// the bytes), any other as text (its length × 2, then the text).
    @inlinable
    package mutating func token(_ token: String) {
        var token = token
        token.withUTF8 { text in
            let packed = text.count / 2
            if packed > 0 && text.count % 2 == 0, let digits = text.baseAddress {
                let start = bytes.count
                varint(UInt64(packed) << 1 | 1)
                let isHex = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: packed) { out -> Bool in
                    guard let out = out.baseAddress else { return false }
                    var invalid: UInt8 = 0
                    for i in 0..<packed {
                        let (high, highInvalid) = Self.nibble(digits[2 &* i])
                        let (low, lowInvalid) = Self.nibble(digits[2 &* i &+ 1])
                        invalid |= highInvalid | lowInvalid
                        out[i] = high &<< 4 | low
                    }
                    guard invalid == 0 else { return false }
                    bytes.append(contentsOf: UnsafeBufferPointer(start: out, count: packed))
                    return true
                }
                if isHex { return }
                bytes.removeSubrange(start...)
            }
            varint(UInt64(text.count) << 1)
            bytes.append(contentsOf: text)
        }
    }

    /// A lower-case hex digit's value, and a non-zero mark when the byte is not one.
    @inline(__always)
    @usableFromInline static func nibble(_ digit: UInt8) -> (value: UInt8, invalid: UInt8) {
        let decimal = digit &- 0x30, letter = digit &- 0x61
        if decimal < 10 { return (decimal, 0) }
        if letter < 6 { return (letter &+ 10, 0) }
        return (0, 1)
    }

    /// `payload` as the lengths of its common prefix and suffix with `previous`, and the bytes between.
    @inlinable
    package mutating func difference(_ payload: [UInt8], from previous: [UInt8]) {
        let (prefix, suffix) = payload.withUnsafeBufferPointer { new in
            previous.withUnsafeBufferPointer { old in
                let limit = min(new.count, old.count)
                var prefix = 0
                while prefix < limit && new[prefix] == old[prefix] { prefix += 1 }
                var suffix = 0
                while suffix < limit - prefix && new[new.count - 1 - suffix] == old[old.count - 1 - suffix] { suffix += 1 }
                return (prefix, suffix)
            }
        }
        varint(UInt64(prefix))
        varint(UInt64(suffix))
        payload.withUnsafeBufferPointer { run(UnsafeBufferPointer(rebasing: $0[prefix..<($0.count - suffix)])) }
    }
}
