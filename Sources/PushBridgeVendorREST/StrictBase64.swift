/// Base64 decoded strictly: every value has exactly one spelling.
///
/// Foundation's decoder ignores the spare low bits of the last character (the last of 43
/// base64url characters carries 2 bits that no byte uses), so four spellings of one 32-byte MAC
/// decode alike. Wherever a secret or a signature is compared (app tokens, UserSigs, Agora tokens),
/// PushBridge decodes with this instead: the spare bits must be zero, padding is exactly what the
/// alphabet says, and nothing else (white space, line breaks, a stray `=`) is let through.
public struct StrictBase64: Sendable {
    /// The character for 62 (`+` in the standard alphabet).
    public let plus: UInt8
    /// The character for 63 (`/` in the standard alphabet).
    public let slash: UInt8
    /// The padding character (`nil`: none is written, and none is read).
    public let padding: UInt8?

    /// RFC 4648 §4: `+`, `/`, padded with `=`.
    public static let standard = StrictBase64(plus: UInt8(ascii: "+"), slash: UInt8(ascii: "/"), padding: UInt8(ascii: "="))
    /// RFC 4648 §5 without padding (JWTs, PushBridge's app tokens): `-`, `_`.
    public static let url = StrictBase64(plus: UInt8(ascii: "-"), slash: UInt8(ascii: "_"), padding: nil)
    /// Tencent's UserSig alphabet: `*`, `-`, padded with `_`.
    public static let tencent = StrictBase64(plus: UInt8(ascii: "*"), slash: UInt8(ascii: "-"), padding: UInt8(ascii: "_"))

    /// The bytes of `text`, or `nil` when it is not the one spelling of any bytes in this alphabet.
    /// - Parameter text: the encoded text.
    public func decode<Text: Collection<UInt8>>(_ text: Text) -> [UInt8]? {
        var digits: [UInt8] = []
        digits.reserveCapacity(text.count)
        var padded = 0
        for c in text {
            if let padding, c == padding {
                padded += 1
                continue
            }
            guard padded == 0, let value = value(of: c) else { return nil }  // nothing after padding
            digits.append(value)
        }
        let rest = digits.count % 4
        guard rest != 1 else { return nil }  // 6 bits cannot end a byte
        if padding != nil {
            guard (digits.count + padded) % 4 == 0, padded == (rest == 0 ? 0 : 4 - rest) else { return nil }
        } else if padded != 0 {
            return nil
        }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count * 3 / 4)
        var i = 0
        while i + 4 <= digits.count {
            let n = UInt32(digits[i]) << 18 | UInt32(digits[i + 1]) << 12 | UInt32(digits[i + 2]) << 6 | UInt32(digits[i + 3])
            out += [UInt8(n >> 16), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
            i += 4
        }
        switch rest {
        case 2:
            guard digits[i + 1] & 0x0F == 0 else { return nil }  // 4 spare bits
            out.append(digits[i] << 2 | digits[i + 1] >> 4)
        case 3:
            guard digits[i + 2] & 0x03 == 0 else { return nil }  // 2 spare bits
            out.append(digits[i] << 2 | digits[i + 1] >> 4)
            out.append(digits[i + 1] << 4 | digits[i + 2] >> 2)
        default: break
        }
        return out
    }

    /// ``decode(_:)`` of a string's UTF-8.
    public func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }

    /// The one spelling of `bytes`.
    /// - Parameter bytes: the bytes to encode.
    public func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = UInt32(bytes[i])
            let b1 = i + 1 < bytes.count ? UInt32(bytes[i + 1]) : 0
            let b2 = i + 2 < bytes.count ? UInt32(bytes[i + 2]) : 0
            let n = b0 << 16 | b1 << 8 | b2
            let count = min(3, bytes.count - i) + 1
            for k in 0..<4 {
                if k < count {
                    out.append(character(UInt8(n >> UInt32(18 - 6 * k) & 0x3F)))
                } else if let padding {
                    out.append(padding)
                }
            }
            i += 3
        }
        return String(decoding: out, as: UTF8.self)
    }

    private func value(of c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return c - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return c - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0") + 52
        case plus: return 62
        case slash: return 63
        default: return nil
        }
    }

    private func character(_ value: UInt8) -> UInt8 {
        switch value {
        case 0..<26: return UInt8(ascii: "A") + value
        case 26..<52: return UInt8(ascii: "a") + value - 26
        case 52..<62: return UInt8(ascii: "0") + value - 52
        case 62: return plus
        default: return slash
        }
    }
}
