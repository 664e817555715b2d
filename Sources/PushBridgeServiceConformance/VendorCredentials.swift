import PushBridgeConformance
import PushBridgeDialects
import PushBridgeJSON

/// The vendor credentials of a server under test that is not PushBridge (`conform --service URL
/// --vendor-credentials FILE`): the harness cannot make an app there, so it uses the one the team
/// configured, with these credentials, for every fixture.
///
/// ```json
/// {"easemob": {"org": "acme", "app": "chat", "clientId": "YXA6…", "clientSecret": "YXA6…"},
///  "tencent": {"sdkAppId": 1400000000, "secretKey": "…", "administrator": "administrator"}}
/// ```
public struct VendorCredentials: Sendable {
    /// Easemob / Agora Chat: the `org/app` path and the client credentials the app token is made with.
    public struct Easemob: Sendable {
        public var org: String
        public var app: String
        public var clientID: String
        public var clientSecret: String
    }

    /// Tencent Cloud IM: the app and the key its UserSigs are signed with.
    public struct Tencent: Sendable {
        public var sdkAppID: UInt64
        public var secretKey: String
        public var administrator: String
    }

    public var easemob: Easemob?
    public var tencent: Tencent?

    /// A secret: a non-empty string; an error names its type, never its value.
    static func secret(_ r: FieldReader, _ key: String, expected: String) throws -> String {
        guard case .string(let text)? = r.value(key), !text.isEmpty else {
            throw InputError(.invalidValue, at: r.pointer / key, expected: expected + " (a non-empty string)", found: r.value(key).map { "a \($0.typeName)" } ?? "nothing")
        }
        return text
    }

    /// Reads a credentials file.
    /// - Throws: `InputError` naming the file and pointer.
    public init(path: String) throws {
        do {
            let r = try FieldReader(try JSONParser.parse(FixtureDiscovery.read(path)), at: .root, what: "vendor credentials")
            try r.allowOnly(["easemob", "tencent"], context: "vendor credentials")
            if let e = try r.optionalObject("easemob", expected: "{\"org\", \"app\", \"clientId\", \"clientSecret\"}") {
                try e.allowOnly(["org", "app", "clientId", "clientSecret"], context: "Easemob credentials")
                easemob = Easemob(
                    org: try e.string("org", expected: "the org name", allowEmpty: false), app: try e.string("app", expected: "the app name", allowEmpty: false),
                    clientID: try e.string("clientId", expected: "the client id", allowEmpty: false),
                    clientSecret: try Self.secret(e, "clientSecret", expected: "the client secret"))
            }
            if let t = try r.optionalObject("tencent", expected: "{\"sdkAppId\", \"secretKey\", \"administrator\"}") {
                try t.allowOnly(["sdkAppId", "secretKey", "administrator"], context: "Tencent credentials")
                tencent = Tencent(
                    sdkAppID: UInt64(try t.int("sdkAppId", in: 1...Int64(UInt32.max), expected: "the SDKAppID")),
                    secretKey: try Self.secret(t, "secretKey", expected: "the app's secret key"),
                    administrator: try t.optionalString("administrator", expected: "the administrator account") ?? "administrator")
            }
            guard easemob != nil || tencent != nil else {
                throw InputError(.missingKey, at: .root, expected: "\"easemob\" or \"tencent\" credentials")
            }
        } catch let error as InputError {
            throw error.file == nil ? error.in(file: path) : error
        }
    }
}
