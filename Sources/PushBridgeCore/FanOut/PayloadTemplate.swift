import PushBridgeJSON

/// A payload written once for a render class, with where its receiver's badge digits and id are:
/// another receiver's payload is the same bytes with its own values written there.
///
/// Not final: a prepared push's render class is one (``PreparedPush/Template``), so that a class and
/// its payload are one object. Unchecked `Sendable`: every stored property is a `let` of a `Sendable` type.
package class PayloadTemplate: @unchecked Sendable {
    package let bytes: [UInt8]
    /// The badge digits (`nil`: no per-receiver badge).
    package let badge: Range<Int>?
    /// The receiver's id, quotes included (`nil`: the profile writes none).
    package let receiver: Range<Int>?
    /// The badge value and receiver id the bytes were written with (`nil`: not known, as for a
    /// template read back from storage): that receiver's payload is `bytes` as they are.
    let writtenFor: (badge: Int, receiver: String)?

    /// - Parameters:
    ///   - bytes: the payload as written for one receiver.
    ///   - badge: where its badge digits are.
    ///   - receiver: where its receiver's id literal is (after `badge`).
    ///   - writtenFor: the badge value and receiver id written there, when known.
    package init(bytes: [UInt8], badge: Range<Int>?, receiver: Range<Int>?, writtenFor: (badge: Int, receiver: String)? = nil) {
        self.bytes = bytes
        self.badge = badge
        self.receiver = receiver
        self.writtenFor = writtenFor
    }

    /// Whether one receiver's payload is `bytes` as they are (no digits or id to replace).
    @inline(__always)
    func isAsWritten(badge value: Int, receiver user: String) -> Bool {
        if isFixed { return true }
        guard let writtenFor else { return false }
        return (badge == nil || writtenFor.badge == value) && (receiver == nil || writtenFor.receiver == user)
    }

    /// A template read back from storage: `nil` when the marks are out of order or outside the bytes.
    package static func checked(bytes: [UInt8], badge: Range<Int>?, receiver: Range<Int>?) -> PayloadTemplate? {
        if let badge, badge.lowerBound < 0 || badge.upperBound > bytes.count { return nil }
        if let receiver, receiver.lowerBound < (badge?.upperBound ?? 0) || receiver.upperBound > bytes.count { return nil }
        return PayloadTemplate(bytes: bytes, badge: badge, receiver: receiver)
    }

    /// Whether every receiver gets the same bytes.
    package var isFixed: Bool { badge == nil && receiver == nil }

    /// The size of one receiver's payload.
    package func size(badge value: Int, receiver user: String) -> Int {
        if isAsWritten(badge: value, receiver: user) { return bytes.count }
        var size = bytes.count
        if let badge { size += JSONWriter.decimalLength(of: value) - badge.count }
        if let receiver { size += JSONWriter.encodedLength(ofString: user) - receiver.count }
        return size
    }

    /// Whether one receiver's payload is at most `limit` bytes (exact only when it is close).
    package func fits(badge value: Int, receiver user: String, limit: Int) -> Bool {
        // At most 20 digits and a sign; at most 6 bytes for each byte of the id, and the quotes.
        if bytes.count + 21 + 6 * user.utf8.count + 2 <= limit { return true }
        return size(badge: value, receiver: user) <= limit
    }

    /// One receiver's payload.
    package func payload(badge value: Int, receiver user: String) -> [UInt8] {
        if isAsWritten(badge: value, receiver: user) { return bytes }
        if let patched = patched(badge: value, receiver: user) { return patched }
        var w = JSONWriter(capacity: size(badge: value, receiver: user))
        write(badge: value, receiver: user, into: &w)
        return w.bytes
    }

    /// One receiver's payload as one array of its exact size: the template's bytes around the
    /// receiver's badge digits and id (`nil` when the id needs escapes: then it is written). The
    /// pieces are put together in a scratch buffer (on the stack when small), then copied once.
    func patched(badge value: Int, receiver user: String) -> [UInt8]? {
        var user = user
        return user.withUTF8 { id -> [UInt8]? in
            if receiver != nil && !JSONWriter.isPlain(id) { return nil }
            let digits = JSONWriter.decimalLength(of: value)
            let size = bytes.count + (badge.map { digits - $0.count } ?? 0) + (receiver.map { id.count + 2 - $0.count } ?? 0)
            return bytes.withUnsafeBufferPointer { written in
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: size) { scratch in
                    var p = scratch.baseAddress!
                    func put(_ piece: UnsafeBufferPointer<UInt8>) {
                        guard let from = piece.baseAddress else { return }
                        p.update(from: from, count: piece.count)
                        p += piece.count
                    }
                    var from = 0
                    if let badge {
                        put(UnsafeBufferPointer(rebasing: written[from..<badge.lowerBound]))
                        JSONWriter.writeDecimal(value, length: digits, to: p)
                        p += digits
                        from = badge.upperBound
                    }
                    if let receiver {
                        put(UnsafeBufferPointer(rebasing: written[from..<receiver.lowerBound]))
                        p.pointee = 0x22
                        p += 1
                        put(id)
                        p.pointee = 0x22
                        p += 1
                        from = receiver.upperBound
                    }
                    put(UnsafeBufferPointer(rebasing: written[from...]))
                    precondition(p == scratch.baseAddress! + size, "a patched payload's size")
                    return Array(scratch)
                }
            }
        }
    }

    /// Appends one receiver's payload to `w`.
    package func write(badge value: Int, receiver user: String, into w: inout JSONWriter) {
        if isAsWritten(badge: value, receiver: user) { return w.raw(bytes) }
        var from = 0
        if let badge {
            w.raw(bytes[from..<badge.lowerBound])
            w.integer(value)
            from = badge.upperBound
        }
        if let receiver {
            w.raw(bytes[from..<receiver.lowerBound])
            w.string(user)
            from = receiver.upperBound
        }
        w.raw(bytes[from...])
    }
}
