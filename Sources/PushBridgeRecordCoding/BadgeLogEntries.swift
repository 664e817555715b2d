/// The bytes of one badge log row (`badge_log.entries`, whose length the schema keeps a multiple of 16).
///
/// Written since 0.17 as varints (``Varint``, shared with the sent-message record): a 16-byte header (row id `-1`, which no user row has, then the
/// number of entries, both 8 bytes little-endian), then per entry the zigzag varint of its row id
/// less the previous entry's and the zigzag varint of its counter, then zeros to a multiple of 16.
/// A group send's rows come in order, so an entry is mostly 2 bytes instead of 16 (1.2 MB less
/// written to the WAL for 77,000 counters). Rows of 0.10–0.16 (each entry the row id and the counter,
/// 8 bytes little-endian each) are still read.
package enum BadgeLogEntries {
    /// The row id of the header entry that marks varint entries.
    static let varintMark: Int64 = -1

    /// The entries of a row, as varints.
    /// - Parameters:
    ///   - count: the number of entries.
    ///   - entry: entry `i`'s user row id and counter.
    package static func write(count: Int, _ entry: (Int) -> (key: Int64, badge: Int)) -> [UInt8] {
        let capacity = 16 + count * 20 + 16
        return [UInt8](unsafeUninitializedCapacity: capacity) { out, written in
            let raw = UnsafeMutableRawBufferPointer(out)
            raw.storeBytes(of: varintMark.littleEndian, toByteOffset: 0, as: Int64.self)
            raw.storeBytes(of: Int64(count).littleEndian, toByteOffset: 8, as: Int64.self)
            var at = 16
            var previous: Int64 = 0
            for i in 0..<count {
                let (key, badge) = entry(i)
                Varint.write(Varint.zigzag(key &- previous), into: out, at: &at)
                Varint.write(Varint.zigzag(Int64(badge)), into: out, at: &at)
                previous = key
            }
            while at % 16 != 0 {
                out[at] = 0
                at += 1
            }
            written = at
        }
    }

    /// Reads one row's entries in order.
    /// - Parameters:
    ///   - blob: the row's bytes.
    ///   - entry: called with each entry's row id and counter.
    /// - Returns: the number of entries.
    /// - Throws: ``RecordDamage`` when the bytes are not entries PushBridge wrote.
    package static func entries(in blob: UnsafeRawBufferPointer, _ entry: (Int64, Int) -> Void) throws(RecordDamage) -> Int {
        func damaged(_ what: String) -> RecordDamage { RecordDamage(what, at: 0) }
        guard blob.count % 16 == 0 else { throw damaged("not a multiple of 16") }
        guard blob.count >= 16, Int64(littleEndian: blob.loadUnaligned(fromByteOffset: 0, as: Int64.self)) == varintMark else {
            let count = blob.count / 16
            for i in 0..<count {
                entry(Int64(littleEndian: blob.loadUnaligned(fromByteOffset: i * 16, as: Int64.self)),
                    Int(Int64(littleEndian: blob.loadUnaligned(fromByteOffset: i * 16 + 8, as: Int64.self))))
            }
            return count
        }
        let count = Int64(littleEndian: blob.loadUnaligned(fromByteOffset: 8, as: Int64.self))
        guard count >= 0, count <= (blob.count - 16) / 2 else { throw damaged("\(count) entries") }
        var at = 16
        func varint() throws(RecordDamage) -> Int64 {
            guard let bits = Varint.read(from: blob, at: &at) else { throw damaged("an entry runs past its end") }
            return Varint.unzigzag(bits)
        }
        var key: Int64 = 0
        for _ in 0..<count {
            key &+= try varint()
            entry(key, Int(try varint()))
        }
        guard blob.count - at < 16, blob[at...].allSatisfy({ $0 == 0 }) else { throw damaged("bytes after the last entry") }
        return Int(count)
    }
}

