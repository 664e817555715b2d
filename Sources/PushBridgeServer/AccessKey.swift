import Crypto
import PushBridgeVendorREST

/// Access keys: random, shown once when made, kept only as their SHA-256.
///
/// A key is 32 random bytes, so an unsalted SHA-256 is enough to keep it secret at rest; keys are
/// compared by hash, in constant time.
public enum AccessKey {
    /// A new key: `pbk_` and 64 hex digits.
    public static func generate() -> String {
        var generator = SystemRandomNumberGenerator()
        return "pbk_" + hex((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }

    /// SHA-256 of a key.
    public static func hash(_ key: String) -> [UInt8] { Array(SHA256.hash(data: Array(key.utf8))) }

    /// Whether two hashes are equal, in time that does not depend on where they differ.
    public static func matches(_ a: [UInt8], _ b: [UInt8]) -> Bool { ConstantTime.equal(a, b) }

    /// Lower-case hex.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Bytes from hex digits (either case), or `nil`.
    public static func bytes(hex: String) -> [UInt8]? {
        let chars = Array(hex.utf8)
        guard chars.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: return c - 48
            case 65...70: return c - 55
            case 97...102: return c - 87
            default: return nil
            }
        }
        var out: [UInt8] = []
        var i = 0
        while i < chars.count {
            guard let high = value(chars[i]), let low = value(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
