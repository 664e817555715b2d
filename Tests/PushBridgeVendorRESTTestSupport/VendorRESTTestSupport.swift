import Foundation
import PushBridgeVendorREST

/// Base64url without padding, as app tokens use it.
package enum AppTokenTestSupport {
    package static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// The one-character changes that keep the significant bits of the last character: the
    /// spellings a lenient decoder reads as the same bytes.
    package static func siblings(of text: String, alphabet: StrictBase64) -> [String] {
        var chars = Array(text.utf8)
        guard let last = chars.lastIndex(where: { $0 != alphabet.padding }) else { return [] }
        let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8) + [alphabet.plus, alphabet.slash]
        guard let value = table.firstIndex(of: chars[last]) else { return [] }
        // The encoded part is what follows the last "." (a token's signature), or the whole text.
        let digits = (chars.lastIndex(of: UInt8(ascii: ".")).map { chars[($0 + 1)...] } ?? chars[...]).filter { $0 != alphabet.padding }.count
        let spare = digits % 4 == 2 ? 0x0F : digits % 4 == 3 ? 0x03 : 0
        var out: [String] = []
        for other in 0..<64 where other != value && other & ~spare == value & ~spare {
            chars[last] = table[other]
            out.append(String(decoding: chars, as: UTF8.self))
        }
        return out
    }
}

/// UserSig verification for tests outside this file.

package enum PushBridgeVendorRESTProbe {
    package static func verify(_ sig: String, sdkAppID: UInt64, identifier: String, key: String) throws {
        _ = try UserSig.verify(sig, sdkAppID: sdkAppID, identifier: identifier, secretKey: key, now: Int64(Date().timeIntervalSince1970))
    }
}

/// Other spellings of a signed credential below its base64: the same bytes compressed another way,
/// as another vendor generator writes them.
package enum CredentialSpellings {
    /// An AccessToken2 (`007…`) with its bytes deflated at `level` (0: stored blocks), or `nil` when it does not decode.
    package static func agoraToken(_ token: String, level: Int32) -> String? {
        guard token.hasPrefix("007"), let bytes = StrictBase64.standard.decode(token.utf8.dropFirst(3)).flatMap({ Zlib.inflate($0) }) else { return nil }
        return "007" + StrictBase64.standard.encode(Zlib.deflate(bytes, level: level))
    }

    /// A UserSig with its JSON respaced as Python's `json.dumps` writes it and deflated at `level`, or `nil` when it does not decode.
    package static func userSig(_ sig: String, level: Int32, spaced: Bool = true) -> String? {
        guard let json = StrictBase64.tencent.decode(sig).flatMap({ Zlib.inflate($0) }) else { return nil }
        return StrictBase64.tencent.encode(Zlib.deflate(spaced ? pythonSpaced(json) : json, level: level))
    }

    /// JSON respaced as Python's `json.dumps` writes it (`", "`, `": "`), outside strings.
    package static func pythonSpaced(_ json: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var inString = false
        var escaped = false
        for byte in json {
            out.append(byte)
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: ",") || byte == UInt8(ascii: ":") {
                out.append(UInt8(ascii: " "))
            }
        }
        return out
    }
}
