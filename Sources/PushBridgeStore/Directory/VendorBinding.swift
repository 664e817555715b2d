import PushBridgeCore

/// The vendor credentials an app answers the vendor's own server REST with (SPEC §12): an Easemob /
/// Agora Chat `org/app` with its client id, or a Tencent Cloud IM `SDKAppID` with its administrator.
public struct VendorBinding: Hashable, Sendable {
    /// The vendor REST family a binding serves.
    public enum Vendor: String, Hashable, Sendable, CaseIterable {
        /// Easemob / Agora Chat: `/{org}/{app}/…` with an app token.
        case easemob
        /// Tencent Cloud IM: `/v4/…?sdkappid=…&usersig=…`.
        case tencent
    }

    /// The PushBridge app the vendor's requests act on.
    public var app: String
    public var vendor: Vendor
    /// What the vendor's requests name: `org/app` (Easemob), the SDKAppID digits (Tencent). One app per key.
    public var key: String
    /// The Easemob `client_id`, or the Tencent administrator account.
    public var account: String
    /// Easemob: SHA-256 of the `client_secret` (never the secret). Tencent: the secret key itself,
    /// which verifying a UserSig (an HMAC) needs.
    public var secret: [UInt8]
    /// Easemob: the random key app tokens are signed with (re-binding changes it, which revokes the
    /// tokens given out before). Tencent: empty.
    public var signingKey: [UInt8]
    /// Easemob: how long an app token lasts when the request names no `ttl`.
    public var tokenSeconds: Int64
    /// When the binding was made.
    public var boundAt: Instant

    /// - Parameters:
    ///   - app: the PushBridge app id.
    ///   - vendor: the REST family.
    ///   - key: `org/app` or the SDKAppID.
    ///   - account: the client id or the administrator.
    ///   - secret: the client secret's SHA-256, or the Tencent secret key.
    ///   - signingKey: the token signing key (Easemob).
    ///   - tokenSeconds: the default token lifetime (Easemob).
    ///   - boundAt: when it was bound.
    public init(
        app: String, vendor: Vendor, key: String, account: String, secret: [UInt8], signingKey: [UInt8] = [], tokenSeconds: Int64 = 0,
        boundAt: Instant
    ) {
        self.app = app
        self.vendor = vendor
        self.key = key
        self.account = account
        self.secret = secret
        self.signingKey = signingKey
        self.tokenSeconds = tokenSeconds
        self.boundAt = boundAt
    }
}

extension VendorBinding {
    /// What `account` starts with when an `easemob` binding holds Agora Chat's App ID and App
    /// Certificate instead of Easemob's client credentials (one REST family at the same paths).
    public static let agoraAccountPrefix = "agora:"

    /// The Agora Chat App ID of an `easemob` binding made with Agora's credentials (its `secret`
    /// is then the App Certificate, which verifying an AccessToken2 needs); `nil` for Easemob's.
    public var agoraAppID: String? {
        guard vendor == .easemob, account.hasPrefix(Self.agoraAccountPrefix) else { return nil }
        return String(account.dropFirst(Self.agoraAccountPrefix.count))
    }
}
