import PushBridgeJSON

/// What a team's server and app need before a black-box run of service fixtures
/// (`pushbridge conform PATHS --print-setup`): the certificates the fixtures name, the users, groups
/// and devices the run makes and removes, and the two credentials files.
public struct ServiceSetup: Sendable {
    /// One certificate the fixtures name, as the mirrored fixtures configure it, and the fixtures that use it.
    public struct Certificate: Sendable {
        public var json: String
        public var fixtures: [String]
    }

    /// What one fixture does to the app over vendor REST, in order.
    public struct Changes: Sendable {
        public var fixture: String
        public var vendor: ServiceFixture.Vendor
        /// Users it registers (Easemob `POST /users`, Tencent `account_import` / `multiaccount_import`).
        public var users: [String]
        /// `METHOD /path` of each request that changes the app (not a GET), the send last.
        public var requests: [String]
        /// Devices registered through `--device-hook` (`VENDOR USER TOKEN CERTIFICATE-OR-BUSIID`).
        public var devices: [String]
        /// Whether it sets up through PushBridge's native API (skipped against another server).
        public var isNative: Bool
    }

    public var certificates: [Certificate] = []
    public var changes: [Changes] = []

    /// Reads what `fixtures` need.
    public init(_ fixtures: [ServiceFixture]) {
        for fixture in fixtures {
            let name = Self.shortName(fixture.path)
            for certificate in fixture.mirrored.document["app"]?["certificates"]?.arrayValue ?? [] {
                let json = certificate.compactText
                if let i = certificates.firstIndex(where: { $0.json == json }) {
                    certificates[i].fixtures.append(name)
                } else {
                    certificates.append(Certificate(json: json, fixtures: [name]))
                }
            }
            var change = Changes(fixture: name, vendor: fixture.vendor, users: [], requests: [], devices: [], isNative: !fixture.isVendorOnly)
            for request in fixture.steps + [fixture.send] {
                if let device = request.device {
                    change.devices.append("\(fixture.vendor.rawValue) \(device.user) \(device.token) \(device.certificate ?? device.busiID.map(String.init) ?? "")")
                    continue
                }
                change.users += Self.registeredUsers(request)
                if request.method != "GET" { change.requests.append((request.isNative ? "native " : "") + "\(request.method) \(request.path)") }
            }
            changes.append(change)
        }
    }

    /// The users a registration request names.
    static func registeredUsers(_ request: ServiceFixture.Request) -> [String] {
        guard !request.isNative, request.method == "POST", let body = request.body else { return [] }
        if request.path == "/users" {  // Easemob / Agora Chat: one user or a list of them
            let users = body.arrayValue ?? [body]
            return users.compactMap { $0["username"]?.stringValue }
        }
        // Tencent names the account `UserID` (older clients: `Identifier`).
        if request.path.hasSuffix("/account_import") { return (body["UserID"] ?? body["Identifier"])?.stringValue.map { [$0] } ?? [] }
        if request.path.hasSuffix("/multiaccount_import") { return body["Accounts"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
        return []
    }

    /// `vendor/file.json` of a fixture's path.
    static func shortName(_ path: String) -> String {
        let parts = path.split(separator: "/")
        return parts.suffix(2).joined(separator: "/")
    }

    /// The setup as text for a person configuring the server under test.
    public var text: String {
        var lines: [String] = []
        lines.append("Before a black-box run of \(changes.count) service fixture(s) against your server:")
        lines.append("")
        lines.append("1. Certificates your app needs, as the fixtures name them (bundle id, busiId, environment):")
        for certificate in certificates {
            lines.append("   \(certificate.json)   (\(certificate.fixtures.count) fixture\(certificate.fixtures.count == 1 ? "" : "s"))")
        }
        if certificates.isEmpty { lines.append("   none") }
        lines.append("")
        lines.append("2. What each fixture does to the app over vendor REST (users and groups it creates, changes and deletes):")
        for change in changes {
            var line = "   \(change.fixture)"
            if change.isNative { line += "  [sets up through PushBridge's native API: skipped against another server]" }
            lines.append(line)
            if !change.users.isEmpty { lines.append("      registers users: " + change.users.joined(separator: ", ")) }
            for request in change.requests { lines.append("      " + request) }
            for device in change.devices { lines.append("      --device-hook " + device) }
        }
        let devices = changes.reduce(0) { $0 + $1.devices.count }
        lines.append("")
        lines.append("3. The harness's vendor credentials (--vendor-credentials FILE, JSON), for the vendors the fixtures use:")
        lines.append(#"   {"easemob": {"org": "…", "app": "…", "clientId": "…", "clientSecret": "…"},"#)
        lines.append(#"    "tencent": {"sdkAppId": 1400000000, "secretKey": "…", "administrator": "…"}}"#)
        lines.append("")
        lines.append("4. Your server's own APNs credentials (its configuration, not a harness file): a token key whose public half")
        lines.append("   you give the harness as --capture-jwt-key, and the APNs URL pointed at --capture-apns HOST:PORT, trusting")
        lines.append("   the CA that `pushbridge conform --capture-ca-out FILE` writes.")
        if devices > 0 {
            lines.append("")
            lines.append("5. --device-hook CMD, run as `CMD VENDOR USER TOKEN CERTIFICATE-OR-BUSIID` for the \(devices) device(s) above")
            lines.append("   that only the vendor's client SDK registers (exit 0 once registered).")
        }
        return lines.joined(separator: "\n")
    }
}
