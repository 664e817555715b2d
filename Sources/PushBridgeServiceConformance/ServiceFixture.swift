import Foundation
import PushBridgeConformance
import PushBridgeDialects
import PushBridgeJSON

/// A service fixture (`Fixtures/service/…`, Specification §12): an app set up through HTTP requests — the
/// native API for what the apps' SDKs report, the vendor's REST for what a backend does — and a
/// vendor REST send. It mirrors an SDK-call fixture: the decision for the mirrored receiver must
/// equal that fixture's `expect` (same intent, same APNs output).
public struct ServiceFixture: Sendable {
    /// Which vendor REST the fixture speaks.
    public enum Vendor: String, Sendable, CaseIterable {
        case easemob
        case tencent
    }

    /// One request: `native` paths are under `/v1/apps/{app}`, `rest` paths under `/{org}/{app}`
    /// (Easemob) or absolute (`/v4/…`, Tencent; the signature query is added).
    public struct Request: Sendable {
        public var isNative: Bool
        public var method: String
        public var path: String
        public var body: JSONValue?
        public var pointer: JSONPointer
        /// Ids the service makes up (an Easemob group id): the value at the pointer of the answer
        /// stands, from then on, for the name the fixture uses (the mirrored fixture's id) — in
        /// later paths and bodies, and in the decision compared.
        public var captures: [Capture] = []
        /// The answer a refusal must get; `nil`: any 2xx (and `ActionStatus` `OK` from Tencent).
        public var answer: ExpectedAnswer?
        /// A device the user's app registers from the vendor's client SDK (no REST call does it:
        /// Tencent), instead of an HTTP request.
        public var device: Device?
    }

    /// `"device": {"user", "token", "certificate" | "busiId"}`: the user's app registered this
    /// device token from the vendor's client SDK and went to the background. Against PushBridge the
    /// runner makes the SDK calls through the native API; against another server, the team's
    /// `--device-hook` does it, or the fixture is skipped.
    public struct Device: Sendable {
        public var user: String
        /// The device token (hex).
        public var token: String
        /// The certificate name (Easemob / Agora `notifier_name`, `apnsCertName`).
        public var certificate: String?
        /// Tencent's certificate id.
        public var busiID: Int?
    }

    /// `"capture": {"name": "/pointer"}`.
    public struct Capture: Sendable {
        /// The name later requests and the mirrored fixture use.
        public var name: String
        /// Where the service's own value is in its answer.
        public var pointer: JSONPointer
    }

    /// `"answer": {"status": 403, "body": {…}}`: the HTTP status, and members the answer's body must
    /// have with these values (objects compared member by member, anything else exactly).
    public struct ExpectedAnswer: Sendable {
        public var status: Int
        public var body: JSONValue?
    }

    public let path: String
    public let name: String
    public let vendor: Vendor
    public let steps: [Request]
    public let send: Request
    /// The SDK-call fixture this one mirrors (its app, receiver, message id and expectation).
    public let mirrored: Fixture
    /// Whether the send pushes every user of the app (`"audience": "every-user"`, a whole-app push
    /// task): on an app other fixtures share, it would reach their users too.
    public let pushesEveryUser: Bool

    /// Whether the fixture speaks the vendor's REST alone (and `device` steps): it runs against any
    /// server that speaks that REST, not only PushBridge.
    public var isVendorOnly: Bool { !send.isNative && !steps.contains { $0.isNative } }

    /// Reads a service fixture and the fixture it mirrors.
    /// - Throws: `InputError` naming the file and pointer.
    public init(path: String) throws {
        self.path = path
        do {
            let r = try FieldReader(try JSONParser.parse(FixtureDiscovery.read(path)), at: .root, what: "a service fixture")
            try r.allowOnly(["name", "description", "mirrors", "vendor", "audience", "steps", "send"], context: "a service fixture")
            if let audience = try r.optionalString("audience", expected: "\"every-user\" (the send pushes every user of the app)") {
                guard audience == "every-user" else {
                    throw InputError(.invalidValue, at: .root / "audience", expected: "\"every-user\" (the send pushes every user of the app)", found: JSONValue.string(audience).compactText)
                }
                pushesEveryUser = true
            } else {
                pushesEveryUser = false
            }
            name = try r.string("name", expected: "the fixture's name", allowEmpty: false)
            _ = try r.optionalString("description")
            vendor = try r.word("vendor", as: Vendor.self)
            let mirrors = try r.string("mirrors", expected: "the SDK-call fixture mirrored, relative to this file", allowEmpty: false)
            let base = URL(fileURLWithPath: path).deletingLastPathComponent()
            let mirroredPath = URL(fileURLWithPath: mirrors, relativeTo: base).standardizedFileURL.path
            do {
                mirrored = try Fixture(path: mirroredPath)
            } catch let error as InputError where error.file == mirroredPath && error.code == .unreadableFile {
                throw InputError(.unknownReference, at: .root / "mirrors", expected: "an existing SDK-call fixture", found: JSONValue.string(mirrors).compactText)
            }
            guard mirrored.expectedDecision != nil else {
                throw InputError(.invalidValue, at: .root / "mirrors", expected: "a fixture with an expect", found: JSONValue.string(mirrors).compactText)
            }
            steps = try r.array("steps", expected: "an array of requests").enumerated().map { i, value in
                try Self.request(value, at: .root / "steps" / i)
            }
            send = try Self.request(try r.value("send") ?? { throw InputError(.missingKey, at: .root / "send", expected: "the send") }(), at: .root / "send")
            guard send.answer == nil, send.captures.isEmpty, send.device == nil else {
                throw InputError(.unknownKey, at: .root / "send", expected: "a send that is answered 2xx and captures nothing")
            }
        } catch let error as InputError {
            throw error.file == nil ? error.in(file: path) : error
        }
    }

    /// `{"native" | "rest": "METHOD /path", "body"?: …, "capture"?: {…}, "answer"?: {…}}`.
    static func request(_ value: JSONValue, at pointer: JSONPointer) throws -> Request {
        let r = try FieldReader(value, at: pointer, what: "{\"native\" or \"rest\": \"METHOD /path\", \"body\"?}")
        try r.allowOnly(["native", "rest", "body", "capture", "answer", "device"], context: "a request")
        if let d = try r.optionalObject("device", expected: "{\"user\", \"token\", \"certificate\" or \"busiId\"}") {
            guard !r.has("native"), !r.has("rest"), !r.has("body"), !r.has("capture"), !r.has("answer") else {
                throw InputError(.unknownKey, at: pointer, expected: "a device step alone (no request beside it)")
            }
            try d.allowOnly(["user", "token", "certificate", "busiId"], context: "a device")
            let device = Device(
                user: try d.string("user", expected: "the user whose app registered the device", allowEmpty: false),
                token: try d.string("token", expected: "the device token (hex)", allowEmpty: false),
                certificate: try d.optionalString("certificate", expected: "the certificate name"),
                busiID: try d.optionalInt("busiId", in: 0...Int64(Int32.max), expected: "Tencent's certificate id"))
            guard (device.certificate == nil) != (device.busiID == nil) else {
                throw InputError(.missingKey, at: d.pointer, expected: "exactly one of \"certificate\" and \"busiId\"")
            }
            guard device.token.count.isMultiple(of: 2), device.token.allSatisfy(\.isHexDigit) else {
                throw InputError(.invalidValue, at: d.pointer / "token", expected: "a hex device token", found: JSONValue.string(device.token).compactText)
            }
            var request = Request(isNative: false, method: "", path: "", body: nil, pointer: pointer)
            request.device = device
            return request
        }
        let isNative = r.has("native")
        guard isNative != r.has("rest") else {
            throw InputError(.missingKey, at: pointer, expected: "exactly one of \"native\", \"rest\" and \"device\"")
        }
        let key = isNative ? "native" : "rest"
        let line = try r.string(key, expected: "\"METHOD /path\", such as \"PUT /users/bob\"", allowEmpty: false)
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["GET", "PUT", "POST", "DELETE"].contains(parts[0]), parts[1].hasPrefix("/") else {
            throw InputError(.invalidValue, at: pointer / key, expected: "\"METHOD /path\" with GET, PUT, POST or DELETE", found: JSONValue.string(line).compactText)
        }
        var request = Request(isNative: isNative, method: parts[0], path: parts[1], body: r.value("body"), pointer: pointer)
        if let capture = try r.optionalObject("capture", expected: "{\"name\": \"/pointer into the answer\"}") {
            for (name, value) in capture.object {
                guard case .string(let text) = value, let target = JSONPointer(text) else {
                    throw InputError(.invalidValue, at: capture.pointer / name, expected: "a JSON pointer such as \"/data/groupid\"", found: value.compactText)
                }
                guard !name.isEmpty else { throw InputError(.invalidValue, at: capture.pointer, expected: "a non-empty name", found: "\"\"") }
                request.captures.append(Capture(name: name, pointer: target))
            }
        }
        if let answer = try r.optionalObject("answer", expected: "{\"status\": HTTP status, \"body\"?: members the answer must have}") {
            try answer.allowOnly(["status", "body"], context: "an expected answer")
            let status = try answer.int("status", in: 100...599, expected: "an HTTP status")
            request.answer = ExpectedAnswer(status: status, body: answer.value("body"))
        }
        return request
    }
}
