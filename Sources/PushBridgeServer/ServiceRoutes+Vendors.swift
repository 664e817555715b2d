import Crypto
import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore
import PushBridgeVendorREST

extension ServiceRoutes {
    /// The vendor credentials an app answers the vendors' REST with (SPEC §12): `PUT` / `DELETE
    /// /v1/apps/{app}/vendors/{easemob|tencent}`, `GET /v1/apps/{app}/vendors`. Secrets go in and
    /// never come out: answers show the client id or administrator only.
    func registerVendors(on router: RecordingRouter<Context>) {
        router.get("/v1/apps/:app/vendors") { request, context in
            let tenant = try await tenant(request, context)
            return json(.object(JSONObject([("vendors", .array(apps.bindings(of: tenant.id).map(Self.bindingBody)))])))
        }
        router.put("/v1/apps/:app/vendors/:vendor") { request, context in
            let tenant = try await tenant(request, context)
            let (vendor, agora) = try self.vendor(context)
            let body = try await body(request, context)
            let binding = try checking { try agora ? Self.agoraBinding(body, app: tenant.id, now: .now) : Self.binding(body, vendor: vendor, app: tenant.id, now: .now) }
            guard try await apps.bind(binding) else {
                throw ServiceError(.conflict, code: "conflict", pointer: vendor == .easemob ? "/org" : "/sdkAppId",
                    expected: vendor == .easemob ? "an org/app no other app is bound to" : "an SDKAppID no other app is bound to",
                    found: JSONWriter.quoted(binding.key))
            }
            logger.info("vendor bound", metadata: ["app": "\(tenant.id)", "vendor": "\(agora ? "agora" : vendor.rawValue)", "key": "\(binding.key)"])
            return json(Self.bindingBody(binding))
        }
        router.delete("/v1/apps/:app/vendors/:vendor") { request, context in
            let tenant = try await tenant(request, context)
            let (vendor, agora) = try self.vendor(context)
            let name = agora ? "agora" : vendor.rawValue
            // easemob and agora are the two credential kinds of one binding: each removes only its own.
            let bound = apps.bindings(of: tenant.id).first { $0.vendor == vendor }
            guard let bound, (bound.agoraAppID != nil) == agora, try await apps.unbind(app: tenant.id, vendor: vendor) else {
                throw ServiceError(.notFound, code: "unknown-reference", pointer: "", expected: "a vendor bound to the app", found: JSONWriter.quoted(name))
            }
            return json(.object(JSONObject([("removed", .string(name))])))
        }
    }

    /// The `{vendor}` of the path: `easemob`, `tencent`, or `agora` (Agora Chat's credentials for the
    /// Easemob / Agora Chat REST family: an `easemob` binding of the other kind).
    func vendor(_ context: Context) throws -> (VendorBinding.Vendor, agora: Bool) {
        let name = try parameter("vendor", context)
        if name == "agora" { return (.easemob, true) }
        guard let vendor = VendorBinding.Vendor(rawValue: name) else {
            throw ServiceError(.notFound, code: "unknown-reference", pointer: "", expected: "easemob, agora or tencent", found: JSONWriter.quoted(name))
        }
        return (vendor, false)
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
            signingKey: (0..<32).map { _ in UInt8.random(in: 0...255) }, tokenSeconds: Int64(seconds), boundAt: now)
    }

    /// The `org` and `app` of an Easemob or Agora Chat binding body.
    static func orgAndApp(_ r: FieldReader) throws -> (String, String) {
        let org = try r.string("org", expected: "the org name (letters, digits, '-' or '_')", allowEmpty: false)
        let name = try r.string("app", expected: "the app name (letters, digits, '-' or '_')", allowEmpty: false)
        for (key, value) in [("org", org), ("app", name)] where !isValidAppID(value) || value.contains(".") {
            throw InputError(.invalidValue, at: .root / key, expected: "1–64 letters, digits, '-' or '_'", found: JSONWriter.quoted(value))
        }
        if org == "v1" || org == "v4" {
            throw InputError(.invalidValue, at: .root / "org", expected: "an org name other than v1 and v4 (the native and Tencent paths)", found: JSONWriter.quoted(org))
        }
        return (org, name)
    }

    /// The default Easemob app-token lifetime: 60 days, as the vendor's documented answer shows (`expires_in` 5184000).
    static let defaultTokenSeconds: Int64 = 5_184_000

    /// Reads a binding body: `{"org", "app", "clientId", "clientSecret", "tokenSeconds"?}` or
    /// `{"sdkAppId", "secretKey", "administrator"?}`.
    static func binding(_ body: JSONValue, vendor: VendorBinding.Vendor, app: String, now: Instant) throws -> VendorBinding {
        switch vendor {
        case .easemob:
            let r = try FieldReader(body, at: .root, what: "{\"org\", \"app\", \"clientId\", \"clientSecret\", \"tokenSeconds\"?}")
            try r.allowOnly(["org", "app", "clientId", "clientSecret", "tokenSeconds"], context: "an Easemob binding")
            let (org, name) = try Self.orgAndApp(r)
            let clientID = try r.identifier("clientId", expected: "the app's client_id")
            let secret = try r.string("clientSecret", expected: "the app's client_secret", allowEmpty: false)
            let seconds = try r.optionalInt("tokenSeconds", in: 60...315_360_000, expected: "the app-token lifetime in seconds, 60–315360000") ?? Int(defaultTokenSeconds)
            return VendorBinding(
                app: app, vendor: .easemob, key: org + "/" + name, account: clientID, secret: Array(SHA256.hash(data: Array(secret.utf8))),
                signingKey: (0..<32).map { _ in UInt8.random(in: 0...255) }, tokenSeconds: Int64(seconds), boundAt: now)
        case .tencent:
            let r = try FieldReader(body, at: .root, what: "{\"sdkAppId\", \"secretKey\", \"administrator\"?}")
            try r.allowOnly(["sdkAppId", "secretKey", "administrator"], context: "a Tencent binding")
            let id = try r.int("sdkAppId", in: 1...Int64(UInt32.max), expected: "the SDKAppID, a positive integer")
            let key = try r.string("secretKey", expected: "the app's secret key (the one UserSigs are made with)", allowEmpty: false)
            let admin = try r.optionalIdentifier("administrator", expected: "the administrator account REST calls are made as") ?? "administrator"
            return VendorBinding(app: app, vendor: .tencent, key: String(id), account: admin, secret: Array(key.utf8), boundAt: now)
        }
    }

    /// A binding as answers show it: never the secret.
    static func bindingBody(_ binding: VendorBinding) -> JSONValue {
        switch binding.vendor {
        case .easemob:
            let parts = binding.key.split(separator: "/", maxSplits: 1).map(String.init)
            if let appID = binding.agoraAppID {
                return .object(
                    JSONObject([
                        ("vendor", "agora"), ("org", .string(parts[0])), ("app", .string(parts.count > 1 ? parts[1] : "")), ("appId", .string(appID)),
                        ("tokenSeconds", .int(binding.tokenSeconds)), ("boundAt", .string(binding.boundAt.description)),
                    ]))
            }
            return .object(
                JSONObject([
                    ("vendor", "easemob"), ("org", .string(parts[0])), ("app", .string(parts.count > 1 ? parts[1] : "")), ("clientId", .string(binding.account)),
                    ("tokenSeconds", .int(binding.tokenSeconds)), ("boundAt", .string(binding.boundAt.description)),
                ]))
        case .tencent:
            return .object(
                JSONObject([
                    ("vendor", "tencent"), ("sdkAppId", .int(Int64(binding.key) ?? 0)), ("administrator", .string(binding.account)),
                    ("boundAt", .string(binding.boundAt.description)),
                ]))
        }
    }
}
