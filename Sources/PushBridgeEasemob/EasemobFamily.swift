import Crypto
import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore
import PushBridgeVendorREST

extension VendorRESTFamily {
    /// Easemob / Agora Chat server REST (Specification §12, §14) at the vendor's paths, `/{org}/{app}/…`: bound
    /// with Easemob's client credentials (`/v1/apps/{app}/vendors/easemob`) or Agora Chat's App ID and
    /// App Certificate (`/v1/apps/{app}/vendors/agora`).
    public static let easemob = VendorRESTFamily(EasemobFamily())
}

extension VendorBinding.Vendor {
    /// Easemob / Agora Chat: `/{org}/{app}/…` with an app token.
    public static let easemob = Self(rawValue: "easemob")
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

/// The Easemob / Agora Chat family: its bindings, routes and error shape.
struct EasemobFamily: VendorREST {
    var kind: VendorBinding.Vendor { .easemob }
    var bindingNames: [String] { ["easemob", "agora"] }
    var pathPrefix: String? { nil }
    var conflict: (pointer: String, expected: String) { ("/org", "an org/app no other app is bound to") }

    /// The default Easemob app-token lifetime: 60 days, as the vendor's documented answer shows (`expires_in` 5184000).
    static let defaultTokenSeconds: Int64 = 5_184_000

    func binding(named name: String, body: JSONValue, app: String, now: Instant) throws -> VendorBinding {
        name == "agora" ? try Self.agoraBinding(body, app: app, now: now) : try Self.easemobBinding(body, app: app, now: now)
    }

    func name(of binding: VendorBinding) -> String { binding.agoraAppID == nil ? "easemob" : "agora" }

    func taskMessages(request: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage] {
        try EasemobREST.taskMessages(request, to: users, id: id)
    }

    func register(on router: RecordingRouter<ServiceRequestContext>, routes: ServiceRoutes) {
        routes.registerEasemob(on: router)
    }

    func methodNotAllowed(_ method: HTTPRequest.Method, expected: String) -> Response {
        EasemobFailure(status: .methodNotAllowed, error: "method_not_allowed", description: "\(method.rawValue): expected \(expected)").response()
    }

    /// Answered in Easemob's shape (404 `service_resource_not_found`) only under an `org/app` that is bound.
    func unknownRoute(segments: [Substring], what: String, apps: ServiceApps) async -> Response? {
        guard segments.count >= 2, await apps.binding(.easemob, key: segments[0] + "/" + segments[1]) != nil else { return nil }
        return EasemobFailure(status: .notFound, error: "service_resource_not_found", description: "url is invalid: " + what).response()
    }

    /// A new key for the app tokens a binding gives out: 32 random bytes (binding again makes another,
    /// which revokes the tokens given out before).
    static func newSigningKey() -> [UInt8] { (0..<32).map { _ in UInt8.random(in: 0...255) } }

    /// Easemob's binding: `{"org", "app", "clientId", "clientSecret", "tokenSeconds"?}`; the secret is kept as its SHA-256.
    static func easemobBinding(_ body: JSONValue, app: String, now: Instant) throws -> VendorBinding {
        let r = try FieldReader(body, at: .root, what: "{\"org\", \"app\", \"clientId\", \"clientSecret\", \"tokenSeconds\"?}")
        try r.allowOnly(["org", "app", "clientId", "clientSecret", "tokenSeconds"], context: "an Easemob binding")
        let (org, name) = try orgAndApp(r)
        let clientID = try r.identifier("clientId", expected: "the app's client_id")
        let secret = try r.string("clientSecret", expected: "the app's client_secret", allowEmpty: false)
        let seconds = try r.optionalInt("tokenSeconds", in: 60...315_360_000, expected: "the app-token lifetime in seconds, 60–315360000") ?? Int(defaultTokenSeconds)
        return VendorBinding(
            app: app, vendor: .easemob, key: org + "/" + name, account: clientID, secret: Array(SHA256.hash(data: Array(secret.utf8))),
            signingKey: newSigningKey(), tokenSeconds: Int64(seconds), boundAt: now)
    }

    /// Agora Chat's binding: `{"org", "app", "appId", "appCertificate", "tokenSeconds"?}` (App ID and
    /// App Certificate are 32 hex digits each, as Agora's token builders require). Kept as an
    /// `easemob` binding whose account is `agora:<App ID>` and whose secret is the certificate.
    static func agoraBinding(_ body: JSONValue, app: String, now: Instant) throws -> VendorBinding {
        let r = try FieldReader(body, at: .root, what: "{\"org\", \"app\", \"appId\", \"appCertificate\", \"tokenSeconds\"?}")
        try r.allowOnly(["org", "app", "appId", "appCertificate", "tokenSeconds"], context: "an Agora Chat binding")
        let (org, name) = try orgAndApp(r)
        let expected = "32 hexadecimal digits (as the Agora console shows it)"
        let appID = try r.string("appId", expected: "the App ID: " + expected)
        let certificate = try r.string("appCertificate", expected: "the App Certificate: " + expected)
        for (key, value) in [("appId", appID), ("appCertificate", certificate)] where AccessKey.bytes(hex: value)?.count != 16 {
            throw InputError(.invalidValue, at: .root / key, expected: expected, found: key == "appId" ? JSONWriter.quoted(value) : "(hidden)")
        }
        let seconds = try r.optionalInt("tokenSeconds", in: 60...315_360_000, expected: "the lifetime in seconds of the tokens POST /{org}/{app}/token exchanges, 60–315360000") ?? Int(AgoraAccessToken.maximumSeconds)
        return VendorBinding(
            app: app, vendor: .easemob, key: org + "/" + name, account: VendorBinding.agoraAccountPrefix + appID, secret: Array(certificate.utf8),
            signingKey: newSigningKey(), tokenSeconds: Int64(seconds), boundAt: now)
    }

    /// The `org` and `app` of an Easemob or Agora Chat binding body.
    static func orgAndApp(_ r: FieldReader) throws -> (String, String) {
        let org = try r.string("org", expected: "the org name (letters, digits, '-' or '_')", allowEmpty: false)
        let name = try r.string("app", expected: "the app name (letters, digits, '-' or '_')", allowEmpty: false)
        for (key, value) in [("org", org), ("app", name)] where !ServiceRoutes.isValidAppID(value) || value.contains(".") {
            throw InputError(.invalidValue, at: .root / key, expected: "1–64 letters, digits, '-' or '_'", found: JSONWriter.quoted(value))
        }
        if org == "v1" || org == "v4" {
            throw InputError(.invalidValue, at: .root / "org", expected: "an org name other than v1 and v4 (the native and Tencent paths)", found: JSONWriter.quoted(org))
        }
        return (org, name)
    }

    /// A binding as answers show it: never the secret (nor, for Agora, the certificate).
    func describe(_ binding: VendorBinding) -> JSONValue {
        let parts = binding.key.split(separator: "/", maxSplits: 1).map(String.init)
        let (org, app) = (parts.first ?? "", parts.count > 1 ? parts[1] : "")
        if let appID = binding.agoraAppID {
            return .object(
                JSONObject([
                    ("vendor", "agora"), ("org", .string(org)), ("app", .string(app)), ("appId", .string(appID)),
                    ("tokenSeconds", .int(binding.tokenSeconds)), ("boundAt", .string(binding.boundAt.description)),
                ]))
        }
        return .object(
            JSONObject([
                ("vendor", "easemob"), ("org", .string(org)), ("app", .string(app)), ("clientId", .string(binding.account)),
                ("tokenSeconds", .int(binding.tokenSeconds)), ("boundAt", .string(binding.boundAt.description)),
            ]))
    }
}
