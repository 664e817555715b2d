/// Comparing secrets and signatures in time that does not depend on where they differ.
package enum ConstantTime {
    /// Whether two byte strings are equal; the time depends on their lengths only.
    /// - Parameters:
    ///   - a: one byte string (a MAC or a hash).
    ///   - b: the other.
    package static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
