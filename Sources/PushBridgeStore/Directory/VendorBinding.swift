import PushBridgeCore

/// The vendor credentials an app answers a vendor's own server REST with (Specification §12): what the vendor's
/// requests name (an `org/app`, an SDKAppID), the account and the secret they are checked with. The store
/// keeps them as they are; the vendor module that serves the family reads and shows them.
public struct VendorBinding: Hashable, Sendable {
    /// The vendor REST family a binding serves, by its stored name (the vendor modules name theirs:
    /// `.easemob`, `.tencent`). A stored name no module serves is kept and answers nothing.
    public struct Vendor: RawRepresentable, Hashable, Sendable, Comparable {
        /// The stored name.
        public var rawValue: String

        /// - Parameter rawValue: the stored name.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
    }

    /// The PushBridge app the vendor's requests act on.
    public var app: String
    public var vendor: Vendor
    /// What the vendor's requests name (`org/app`, the SDKAppID digits). One app per key and family.
    public var key: String
    /// Whom the requests come from: a client id, an administrator account.
    public var account: String
    /// What the requests' credentials are checked with: a secret's hash, or the secret itself where
    /// verifying needs it (an HMAC key).
    public var secret: [UInt8]
    /// The random key the service signs the tokens it gives out with (re-binding changes it, which
    /// revokes the tokens given out before); empty when the family gives out none.
    public var signingKey: [UInt8]
    /// How long a token the service gives out lasts when the request names no lifetime.
    public var tokenSeconds: Int64
    /// When the binding was made.
    public var boundAt: Instant

    /// - Parameters:
    ///   - app: the PushBridge app id.
    ///   - vendor: the REST family.
    ///   - key: what the vendor's requests name.
    ///   - account: whom the requests come from.
    ///   - secret: what their credentials are checked with.
    ///   - signingKey: the key of the tokens the service gives out.
    ///   - tokenSeconds: the default token lifetime.
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

