import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import PushBridgeConformance
import PushBridgeJSON

/// Runs service fixtures against a running `pushbridge serve` (`pushbridge conform --service URL`,
/// and the test suite against a service it starts on loopback): one new app per fixture, made
/// with the admin key, bound to fresh vendor credentials.
///
/// In black-box mode (``capture`` set: `--capture-apns`), a fixture is judged by the requests
/// that reach the capture instead of the decision PushBridge records, so the server under test may
/// be any server that speaks the vendor's REST: PushBridge (with the admin key) or another one
/// (``init(baseURL:credentials:client:)``: `--vendor-credentials`), which runs the vendor-only
/// fixtures. Fixtures run one at a time: the capture must know whose request it is.
public struct ServiceConformanceRunner: Sendable {
    /// The service, such as `http://127.0.0.1:8080`.
    public let baseURL: String
    let access: Access
    let client: HTTPClient
    /// The APNs capture of black-box mode; `nil`: decisions are read back from PushBridge.
    public var capture: APNsCapture?
    /// How long a send's pushes may take to reach the capture (`--capture-timeout`).
    public var captureTimeout: Duration = .seconds(5)
    /// How long the capture keeps listening after the expected pushes came (for an extra one).
    public var captureQuiet: Duration = .milliseconds(500)
    /// The team's command that registers a device on the server under test, for `device` steps
    /// (`--device-hook`): run by `/bin/sh -c` with the vendor, user, token and certificate name or
    /// busiId as `$1`…`$4`.
    public var deviceHook: String?

    /// How the harness reaches the server's apps.
    enum Access: Sendable {
        /// PushBridge: a new app per fixture, made with the admin key.
        case admin(String)
        /// Another server: the team's app and its vendor credentials, for every fixture.
        case vendor(VendorCredentials)
    }

    /// - Parameters:
    ///   - baseURL: the service's base URL.
    ///   - adminKey: the service's admin key (apps are created with it).
    ///   - client: the HTTP client (`HTTPClient.shared` by default).
    public init(baseURL: String, adminKey: String, client: HTTPClient = .shared) {
        self.init(baseURL: baseURL, access: .admin(adminKey), client: client)
    }

    /// A runner for a server that is not PushBridge: black-box mode only (set ``capture``).
    /// - Parameters:
    ///   - baseURL: the server's base URL.
    ///   - credentials: its vendor credentials.
    ///   - client: the HTTP client.
    public init(baseURL: String, credentials: VendorCredentials, client: HTTPClient = .shared) {
        self.init(baseURL: baseURL, access: .vendor(credentials), client: client)
    }

    init(baseURL: String, access: Access, client: HTTPClient) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.access = access
        self.client = client
    }

    /// Checks that a PushBridge service answers at ``baseURL`` (`GET /healthz`); for another
    /// server, that anything answers HTTP there.
    /// - Throws: a description of what answered instead, or why nothing did.
    public func checkReachable() async throws {
        do {
            if case .vendor = access {
                var request = HTTPClientRequest(url: baseURL + "/")
                request.method = .GET
                _ = try await client.execute(request, timeout: .seconds(10))
                return
            }
            let answer = try await call("GET", "/healthz", body: nil, bearer: nil, what: "GET /healthz")
            guard answer.body["status"] != nil else { throw Refused(description: "GET /healthz answered no PushBridge health status") }
        } catch let refused as Refused {
            throw refused
        } catch {
            throw Refused(description: "nothing answered at \(baseURL) (\(error))")
        }
    }

    /// Runs every service fixture under the paths, in file order.
    /// - Throws: `InputError` when a path does not exist.
    public func run(paths: [String], selection: FixtureSelection = .all) async throws -> ConformanceReport {
        var results: [FixtureResult] = []
        let ledger = CaptureLedger()
        for file in try FixtureDiscovery.files(in: paths) where selection.takes(path: file, name: nil) {
            let result = await run(file: file, ledger: ledger)
            ledger.blame(&results)
            results.append(result)
        }
        if let capture, ledger.lastEnd != nil {
            // The last fixture's late pushes: one more quiet window.
            try? await Task.sleep(for: captureQuiet)
            ledger.late = capture.requests(since: ledger.lastEnd!)
            ledger.blame(&results)
        }
        return ConformanceReport(results: results, notices: capture.map(ledger.notices) ?? [])
    }

    /// Runs one service fixture.
    public func run(file: String) async -> FixtureResult {
        await run(file: file, ledger: CaptureLedger())
    }

    func run(file: String, ledger: CaptureLedger) async -> FixtureResult {
        let start = ContinuousClock.now
        let fixture: ServiceFixture
        do {
            fixture = try ServiceFixture(path: file)
        } catch let error as InputError {
            return FixtureResult(path: file, name: nil, failure: .badFixture(error))
        } catch {
            return FixtureResult(path: file, name: nil, failure: .implementation("\(error)"))
        }
        var result: FixtureResult
        let dialects = [fixture.mirrored.scenario.dialect]
        if let reason = skipReason(fixture) {
            return .skipped(path: file, name: fixture.name, reason: reason, dialects: dialects)
        }
        do {
            let failure = try await judge(fixture, ledger: ledger)
            result = FixtureResult(path: file, name: fixture.name, failure: failure, dialects: dialects)
        } catch let error as InputError {
            result = FixtureResult(path: file, name: fixture.name, failure: .badFixture(error.file == nil ? error.in(file: file) : error))
        } catch {
            result = FixtureResult(path: file, name: fixture.name, failure: .implementation("\(error)"))
        }
        let elapsed = ContinuousClock.now - start
        result.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return result
    }

    /// Why a fixture cannot run against this server, if it cannot.
    func skipReason(_ fixture: ServiceFixture) -> String? {
        guard case .vendor(let credentials) = access else { return nil }
        if capture == nil { return "a server that is not PushBridge is judged by what reaches APNs: give --capture-apns" }
        if !fixture.isVendorOnly { return "sets up through PushBridge's native API (not vendor REST another server answers)" }
        if fixture.pushesEveryUser { return "pushes every user of the app: on the app every fixture shares, that reaches the other fixtures' users too" }
        switch fixture.vendor {
        case .easemob where credentials.easemob == nil: return "an Easemob fixture: the credentials file has no \"easemob\""
        case .tencent where credentials.tencent == nil: return "a Tencent fixture: the credentials file has no \"tencent\""
        default: break
        }
        if deviceHook == nil, fixture.steps.contains(where: { $0.device != nil }) {
            return "registers a device from the vendor's client SDK (no REST call does it): give --device-hook CMD"
        }
        return nil
    }

    /// A request the service answered otherwise than the fixture needs.
    struct Refused: Error, CustomStringConvertible {
        var description: String
    }

    /// Sets the app up, runs the steps and the send, and compares the receiver's decision (or, in
    /// black-box mode, the requests that reached the capture).
    func judge(_ fixture: ServiceFixture, ledger: CaptureLedger) async throws -> FixtureFailure? {
        let target = try await prepare(fixture)
        var names = CapturedNames()
        for step in fixture.steps {
            let answer = try await perform(names.applied(to: step), target: target, messageID: nil)
            try names.capture(step, from: answer)
        }
        let messageID: String? = {
            if case .string(let id)? = fixture.mirrored.scenario.message["id"] { return id }
            return nil
        }()
        let expectation = fixture.mirrored.expectedDecision!
        if let capture {
            let mark = capture.mark
            if let end = ledger.lastEnd, mark > end { ledger.late = Array(capture.requests(since: end).prefix(mark - end)) }
            ledger.lastEnd = nil
            // On a shared app (another server) the mirrored id may have been used: a new one each
            // run, read back from the answer and compared as the mirrored one.
            var sendID = messageID
            if target.app == nil, let messageID { sendID = messageID + "-" + Self.randomHex(8) }
            let answer = try await perform(names.applied(to: fixture.send), target: target, messageID: sendID)
            if let messageID, let made = Self.messageIDs(answer), made.count == 1 { names.add(name: messageID, value: made[0]) }
            let wanted = CapturedPushes.expected(expectation)
            let expectedPushes = wanted["deliveries"]?.arrayValue?.count ?? 0
            if expectedPushes > 0 { ledger.expectedPushes = true }
            let requests = await capture.collect(since: mark, expected: expectedPushes, timeout: captureTimeout, quiet: captureQuiet)
            ledger.lastEnd = mark + requests.count
            // A push task's answer names no message: the id its push carries is the server's own,
            // read where the fixture's payload has the mirrored id.
            if let messageID, Self.messageIDs(answer) == nil, let first = requests.first,
                let made = Self.value(in: CapturedPushes.payload(of: first), at: Self.path(of: messageID, in: wanted["payload"] ?? .null))?.stringValue
            {
                names.add(name: messageID, value: made)
            }
            // A request the capture refused (a provider token not signed with the team's key, a bad
            // header) is no push: APNs would not deliver it.
            let refused = requests.filter { $0.status != 200 }
            if !refused.isEmpty {
                let reasons = Set(refused.map { "\($0.status) \($0.reason ?? "")" }).sorted().joined(separator: ", ")
                return .implementation("APNs refused \(refused.count) of \(requests.count) request(s): \(reasons)")
            }
            let differences = try CapturedPushes.differences(expected: wanted, requests: requests, renaming: names.fixture)
            return differences.isEmpty ? nil : .mismatch(differences)
        }
        guard let app = target.app else { throw Refused(description: "decisions are read back from PushBridge only: give --capture-apns") }
        let sent = try await perform(names.applied(to: fixture.send), target: target, messageID: messageID)
        let ids: [String]
        if fixture.send.isNative, case .string(let id)? = sent.body["message"] {
            ids = [id]
        } else if let header = sent.messagesHeader {
            ids = header
        } else if let task = sent.taskHeader {
            // A push task: its push to the mirrored receiver, once the task has ended.
            let id = try await endedTaskMessage(task, receiver: fixture.mirrored.scenario.receiver.user, app: app)
            if let messageID { names.add(name: messageID, value: id) }
            ids = [messageID ?? id]
        } else {
            throw Refused(description: "the send answered no PushBridge-Messages header")
        }
        let receiver = fixture.mirrored.scenario.receiver.user
        for id in ids {
            let read = try await call("GET", "/v1/apps/\(app.id)/messages/\(names.service(id))", body: nil, bearer: app.key, what: "reading message \(id) back")
            for decision in read.body["decisions"]?.arrayValue ?? [] where decision["receiver"] == .string(receiver) {
                guard case .object(var object) = decision else { continue }
                object["receiver"] = nil
                var w = JSONWriter()
                w.write(names.fixture(.object(object)))
                let differences = try ConformanceRunner.compare(expectedDecision: expectation, got: w.bytes)
                return differences.isEmpty ? nil : .mismatch(differences)
            }
        }
        throw Refused(description: "no decision for the mirrored receiver \(receiver) in messages \(ids.joined(separator: ","))")
    }

    /// Waits (at most 30 s) until a PushBridge push task has ended, and returns the id of its push to `receiver`.
    func endedTaskMessage(_ task: String, receiver: String, app: (id: String, key: String)) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let status = try await call("GET", "/v1/apps/\(app.id)/push-tasks/\(task)", body: nil, bearer: app.key, what: "reading push task \(task)")
            if let state = status.body["state"]?.stringValue, state == "finished" || state == "cancelled" { break }
            guard ContinuousClock.now < deadline else { throw Refused(description: "push task \(task) did not end within 30 s: \(status.body.compactText)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return "pushtask-\(task)-\(receiver)"
    }

    /// The path of the first string equal to `text` in `value` (object keys and array indices), or `nil`.
    static func path(of text: String, in value: JSONValue) -> [String]? {
        switch value {
        case .string(let s): return s == text ? [] : nil
        case .object(let object):
            for (key, member) in object { if let rest = path(of: text, in: member) { return [key] + rest } }
        case .array(let items):
            for (i, item) in items.enumerated() { if let rest = path(of: text, in: item) { return [String(i)] + rest } }
        default: break
        }
        return nil
    }

    /// The value at a path made by ``path(of:in:)``.
    static func value(in value: JSONValue, at path: [String]?) -> JSONValue? {
        guard let path else { return nil }
        var current = value
        for step in path {
            if case .array(let items) = current, let i = Int(step), items.indices.contains(i) { current = items[i] } else if let next = current[step] { current = next } else { return nil }
        }
        return current
    }

    /// The ids of the messages a send made: `PushBridge-Messages`, or an Easemob answer's `data`
    /// (target → message id).
    static func messageIDs(_ answer: Answer) -> [String]? {
        if let header = answer.messagesHeader { return header }
        guard case .object(let data)? = answer.body["data"] else { return nil }
        let ids = data.compactMap { $0.value.stringValue }
        return ids.isEmpty ? nil : ids
    }

    /// Where one fixture's requests go: a new PushBridge app (admin access), or the team's app with
    /// what the fixture will make deleted first (vendor access).
    func prepare(_ fixture: ServiceFixture) async throws -> Target {
        switch access {
        case .admin(let adminKey):
            let app = "conform-" + Self.randomHex(12)
            let created = try await call("POST", "/v1/apps", body: ["app": .string(app)], bearer: adminKey, what: "creating the app")
            guard case .string(let key)? = created.body["key"] else { throw Refused(description: "POST /v1/apps answered no key") }
            // The mirrored fixture's certificates; templates and all other state come from the steps.
            if let certificates = fixture.mirrored.document["app"]?["certificates"] {
                _ = try await call("PUT", "/v1/apps/\(app)", body: ["certificates": certificates], bearer: key, what: "the mirrored fixture's certificates")
            }
            let vendor = try await bind(fixture.vendor, app: app, key: key)
            return Target(vendor: fixture.vendor, access: vendor, app: (app, key))
        case .vendor(let credentials):
            let vendor = try await access(fixture.vendor, credentials)
            let target = Target(vendor: fixture.vendor, access: vendor, app: nil)
            try await clear(fixture, target)
            return target
        }
    }

    /// Where a fixture's requests go.
    struct Target {
        var vendor: ServiceFixture.Vendor
        var access: VendorAccess
        /// PushBridge's app and its key (admin access only).
        var app: (id: String, key: String)?
    }

    /// What the vendor requests of one fixture are made with.
    struct VendorAccess {
        var prefix: String
        var bearer: String?
        var query: String
    }

    /// Binds fresh vendor credentials to the app: an app token (Easemob) or a UserSig (Tencent).
    func bind(_ vendor: ServiceFixture.Vendor, app: String, key: String) async throws -> VendorAccess {
        switch vendor {
        case .easemob:
            let e = VendorCredentials.Easemob(org: "conform", app: app, clientID: "YXA6" + Self.randomHex(16), clientSecret: "YXA6" + Self.randomHex(24))
            _ = try await call(
                "PUT", "/v1/apps/\(app)/vendors/easemob",
                body: ["org": .string(e.org), "app": .string(e.app), "clientId": .string(e.clientID), "clientSecret": .string(e.clientSecret)],
                bearer: key, what: "binding Easemob credentials")
            return try await access(e)
        case .tencent:
            let t = VendorCredentials.Tencent(sdkAppID: UInt64.random(in: 1_400_000_000...1_499_999_999), secretKey: Self.randomHex(32), administrator: "administrator")
            _ = try await call(
                "PUT", "/v1/apps/\(app)/vendors/tencent",
                body: ["sdkAppId": .int(Int64(t.sdkAppID)), "secretKey": .string(t.secretKey), "administrator": .string(t.administrator)],
                bearer: key, what: "binding Tencent credentials")
            return access(t)
        }
    }

    func perform(_ request: ServiceFixture.Request, target: Target, messageID: String?) async throws -> Answer {
        if let device = request.device {
            try await register(device, target: target, at: request.pointer)
            return Answer(headers: [:], body: .null)
        }
        let what = "\(request.isNative ? "native" : "rest") \(request.method) \(request.path) (\(request.pointer))"
        if request.isNative {
            guard let app = target.app else { throw Refused(description: "\(what): the native API is PushBridge's") }
            return try await call(request.method, "/v1/apps/\(app.id)" + request.path, body: request.body, bearer: app.key, what: what, expected: request.answer)
        }
        let vendor = target.access
        var path = vendor.prefix + request.path
        if !vendor.query.isEmpty { path += (path.contains("?") ? "&" : "?") + vendor.query }
        let answer = try await call(request.method, path, body: request.body, bearer: vendor.bearer, what: what, messageID: messageID, expected: request.answer)
        if request.answer == nil, !vendor.query.isEmpty, answer.body["ActionStatus"] != .string("OK") {
            throw Refused(description: "\(what): \(answer.body.compactText)")
        }
        return answer
    }

    struct Answer {
        var headers: HTTPHeaders
        var body: JSONValue

        /// The push task in `PushBridge-Task`, when the answer has one (a campaign's send).
        var taskHeader: String? { headers.first(name: "PushBridge-Task").flatMap { $0.isEmpty ? nil : $0 } }

        /// The ids in `PushBridge-Messages`, when the answer has them.
        var messagesHeader: [String]? {
            guard let header = headers.first(name: "PushBridge-Messages"), !header.isEmpty else { return nil }
            return header.split(separator: ",").map(String.init)
        }
    }

    /// One JSON request; anything but 2xx (or, for an expected refusal, anything but its status and
    /// members) is a failure of the service under test.
    func call(
        _ method: String, _ path: String, body: JSONValue?, bearer: String?, what: String, messageID: String? = nil, expected: ServiceFixture.ExpectedAnswer? = nil
    ) async throws -> Answer {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = HTTPMethod(rawValue: method)
        if let bearer { request.headers.add(name: "Authorization", value: "Bearer " + bearer) }
        if let messageID { request.headers.add(name: "PushBridge-Message-Id", value: messageID) }
        if let body {
            var w = JSONWriter()
            w.write(body)
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(bytes: w.bytes))
        }
        let response = try await client.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 16 << 20)
        let parsed = bytes.readableBytes == 0 ? JSONValue.null : (try? JSONParser.parse(bytes.readableBytesView)) ?? .null
        if let expected {
            guard Int(response.status.code) == expected.status, expected.body.map({ Self.has(parsed, $0) }) ?? true else {
                let wanted = "HTTP \(expected.status)" + (expected.body.map { " with \($0.compactText)" } ?? "")
                throw Refused(description: "\(what): expected \(wanted), got HTTP \(response.status.code) \(parsed.compactText)")
            }
        } else if !(200..<300).contains(response.status.code) {
            throw Refused(description: "\(what): HTTP \(response.status.code) \(parsed.compactText)")
        }
        return Answer(headers: response.headers, body: parsed)
    }

    /// Whether `value` has `wanted`: an object's members compared one by one (others may be there
    /// too), an array's items in order (as many as wanted), anything else exactly.
    static func has(_ value: JSONValue, _ wanted: JSONValue) -> Bool {
        switch (wanted, value) {
        case (.object(let members), _):
            return members.allSatisfy { key, member in value[key].map { has($0, member) } ?? false }
        case (.array(let items), .array(let got)):
            return items.count == got.count && zip(got, items).allSatisfy { has($0, $1) }
        default:
            return value == wanted
        }
    }

    static func randomHex(_ count: Int) -> String {
        String((0..<count).map { _ in "0123456789abcdef".randomElement()! })
    }
}
