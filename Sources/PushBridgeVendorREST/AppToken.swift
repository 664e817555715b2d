import Crypto
import Foundation
import PushBridgeCore

/// An Easemob / Agora Chat app token as PushBridge issues it for `POST /{org}/{app}/token`:
/// `pbt1.<expiry in ms, base64url>.<HMAC-SHA256 of the part before, base64url>`, signed with the
/// binding's own signing key. Nothing is stored per token; re-binding the app's credentials changes
/// the key and so revokes every token issued before.
public enum AppToken {
    /// What a presented token turned out to be.
    public enum Check: Hashable, Sendable {
        case valid(expiresAt: Instant)
        case expired(at: Instant)
        /// Not a token of this binding (another app's, a forged one, or not a token at all).
        case invalid
    }

    static let prefix = "pbt1."

    /// Issues a token.
    /// - Parameters:
    ///   - signingKey: the binding's signing key.
    ///   - expiresAt: when it stops working.
    public static func issue(signingKey: [UInt8], expiresAt: Instant) -> String {
        let body = prefix + base64URL(Array(String(expiresAt.milliseconds).utf8))
        return body + "." + base64URL(mac(body, signingKey))
    }

    /// Checks a token against a binding's signing key.
    /// - Parameters:
    ///   - token: the bearer token.
    ///   - signingKey: the binding's signing key.
    ///   - now: the current time.
    public static func check(_ token: String, signingKey: [UInt8], now: Instant) -> Check {
        guard token.hasPrefix(prefix), let dot = token.lastIndex(of: "."), dot > token.index(token.startIndex, offsetBy: prefix.count - 1) else {
            return .invalid
        }
        let body = String(token[..<dot])
        guard let claimed = fromBase64URL(String(token[token.index(after: dot)...])) else { return .invalid }
        let expected = mac(body, signingKey)
        guard ConstantTime.equal(claimed, expected) else { return .invalid }
        guard let payload = fromBase64URL(String(body.dropFirst(prefix.count))), let text = String(bytes: payload, encoding: .utf8),
            let ms = Int64(text)
        else { return .invalid }
        let expiry = Instant(milliseconds: ms)
        return now < expiry ? .valid(expiresAt: expiry) : .expired(at: expiry)
    }

    static func mac(_ body: String, _ key: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(body.utf8), using: SymmetricKey(data: key)))
    }

    static func base64URL(_ bytes: [UInt8]) -> String { StrictBase64.url.encode(bytes) }

    /// Strict: one spelling per value (a token whose last character's spare bits are set is not this token).
    static func fromBase64URL(_ text: String) -> [UInt8]? { StrictBase64.url.decode(text) }
}
