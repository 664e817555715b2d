import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeVendorREST
import PushBridgeServer
import PushBridgeStore

extension VendorRESTFamily {
    /// Tencent Cloud IM server REST (Specification §12, §14) at the vendor's path, `POST /v4/{service}/{command}`
    /// with a UserSig: bound with an SDKAppID and its secret key (`/v1/apps/{app}/vendors/tencent`).
    public static let tencent = VendorRESTFamily(TencentFamily())
}

extension VendorBinding.Vendor {
    /// Tencent Cloud IM: `/v4/…?sdkappid=…&usersig=…`.
    public static let tencent = Self(rawValue: "tencent")
}

extension TencentREST.Failure: VendorRefusal {}

/// The Tencent Cloud IM family: its binding, routes and error shape.
struct TencentFamily: VendorREST {
    var kind: VendorBinding.Vendor { .tencent }
    var bindingNames: [String] { ["tencent"] }
    var pathPrefix: String? { "v4" }
    var conflict: (pointer: String, expected: String) { ("/sdkAppId", "an SDKAppID no other app is bound to") }

    /// Reads `{"sdkAppId", "secretKey", "administrator"?}`; the secret key is kept as it is: verifying a
    /// UserSig (an HMAC) needs it.
    func binding(named name: String, body: JSONValue, app: String, now: Instant) throws -> VendorBinding {
        let r = try FieldReader(body, at: .root, what: "{\"sdkAppId\", \"secretKey\", \"administrator\"?}")
        try r.allowOnly(["sdkAppId", "secretKey", "administrator"], context: "a Tencent binding")
        let id = try r.int("sdkAppId", in: 1...Int64(UInt32.max), expected: "the SDKAppID, a positive integer")
        let key = try r.string("secretKey", expected: "the app's secret key (the one UserSigs are made with)", allowEmpty: false)
        let admin = try r.optionalIdentifier("administrator", expected: "the administrator account REST calls are made as") ?? "administrator"
        return VendorBinding(app: app, vendor: .tencent, key: String(id), account: admin, secret: Array(key.utf8), boundAt: now)
    }

    func name(of binding: VendorBinding) -> String { "tencent" }

    /// A binding as answers show it: never the secret key.
    func describe(_ binding: VendorBinding) -> JSONValue {
        .object(
            JSONObject([
                ("vendor", "tencent"), ("sdkAppId", .int(Int64(binding.key) ?? 0)), ("administrator", .string(binding.account)),
                ("boundAt", .string(binding.boundAt.description)),
            ]))
    }

    func register(on router: RecordingRouter<ServiceRequestContext>, routes: ServiceRoutes) {
        routes.registerTencent(on: router)
    }

    /// Tencent answers HTTP 200 with its code; a method it has no command for is 405 here, with its body.
    func methodNotAllowed(_ method: HTTPRequest.Method, expected: String) -> Response {
        ServiceRoutes.tencentBody(60008, "HTTP method \(method.rawValue) is not served: expected \(expected)", status: .methodNotAllowed)
    }

    /// Each receiver's push of a task: the stored body as `openim/sendmsg` reads it.
    func taskMessages(request: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage] {
        try TencentREST.taskMessages(request, to: users, id: id)
    }

    /// 60009 (HTTP 200), as Tencent answers its unknown commands.
    func unknownRoute(segments: [Substring], what: String, apps: ServiceApps) async -> Response? {
        ServiceRoutes.tencentBody(60009, what)
    }
}
