import Crypto
import Foundation
import Synchronization

/// Signs APNs provider tokens (ES256 JWTs) with a `.p8` key and reuses each one: a token is
/// replaced after ``refreshSeconds`` (Apple: no more often than every 20 minutes, at least every
/// 60), or once when APNs answers `ExpiredProviderToken` for it.
public final class ProviderTokenSigner: Sendable {
    /// The key id (`kid`), 10 characters.
    public let keyID: String
    /// The team id (`iss`), 10 characters.
    public let teamID: String
    /// How long a token is reused, in seconds (20–59 minutes).
    public let refreshSeconds: Int64
    private let key: P256.Signing.PrivateKey
    private let current = Mutex<(jwt: String, issuedAt: Int64)?>(nil)

    /// - Parameters:
    ///   - key: the `.p8` key.
    ///   - keyID: the key id Apple gave it.
    ///   - teamID: the developer team id.
    ///   - refreshSeconds: reuse time, clamped to 20–59 minutes.
    public init(key: P256.Signing.PrivateKey, keyID: String, teamID: String, refreshSeconds: Int64 = 50 * 60) {
        self.key = key
        self.keyID = keyID
        self.teamID = teamID
        self.refreshSeconds = min(max(refreshSeconds, 20 * 60), 59 * 60)
    }

    /// The token to send now: the current one while it is young enough, else a new one.
    /// - Parameter now: epoch seconds.
    /// - Returns: the JWT and its `iat`.
    public func token(now: Int64) -> (jwt: String, issuedAt: Int64) {
        current.withLock { current in
            if let current, now - current.issuedAt < refreshSeconds, current.issuedAt - now < 300 { return current }
            let made = (sign(issuedAt: now), now)
            current = made
            return made
        }
    }

    /// APNs refused the token issued at `issuedAt` as expired: replaces it, unless it was already replaced.
    /// - Returns: whether this call made the new token.
    @discardableResult
    public func refresh(rejectedIssuedAt issuedAt: Int64, now: Int64) -> Bool {
        current.withLock { current in
            guard let existing = current, existing.issuedAt == issuedAt else { return false }
            current = (sign(issuedAt: max(now, issuedAt + 1)), max(now, issuedAt + 1))
            return true
        }
    }

    func sign(issuedAt: Int64) -> String {
        let header = Self.base64URL(Array("{\"alg\":\"ES256\",\"kid\":\"\(keyID)\"}".utf8))
        let claims = Self.base64URL(Array("{\"iss\":\"\(teamID)\",\"iat\":\(issuedAt)}".utf8))
        let input = header + "." + claims
        // ES256 signs SHA-256 of the input; the JWT carries r‖s (64 bytes).
        let signature = (try? key.signature(for: Data(input.utf8)).rawRepresentation) ?? Data()
        return input + "." + Self.base64URL(Array(signature))
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
