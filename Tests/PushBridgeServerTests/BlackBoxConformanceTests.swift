import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import NIOHTTP1
import PushBridgeAPNsMock
import PushBridgeConformance
import PushBridgeJSON
import PushBridgeServiceConformance
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Black-box conformance: service fixtures judged by the requests that reach the APNs
/// capture, against a `pushbridge serve` process configured to deliver there — with the admin key,
/// as a server that is not PushBridge (vendor credentials and a device hook), and through a
/// deliberately broken relay that the capture must catch.
@Suite("Black-box conformance", .serialized)
struct BlackBoxConformanceTests {
    /// A `pushbridge serve` process delivering to a fresh capture (token auth, checked by the
    /// capture against the kit's key).
    static func withServerAndCapture<T>(store: String, _ body: (ProcessScenario.ServerProcess, APNsCapture, HTTPClient) async throws -> T) async throws -> T {
        let kit = try DeliveryKit()
        let capture = try await APNsCapture.start(host: "127.0.0.1", port: 0, providerKey: kit.key.publicKey)
        let ca = try kit.write("capture-ca.pem", capture.authority.certificatePEM)
        let database = store == ":memory:" ? ":memory:" : temporaryDirectory()
        var environment = [
            "PUSHBRIDGE_APNS_CREDENTIALS_FILE": try kit.credentialsFile(), "PUSHBRIDGE_APNS_URL": capture.baseURL, "PUSHBRIDGE_APNS_CA_FILE": ca,
        ]
        if store == "postgres", let url = testPostgresURL() {
            let location = try await freshPostgresDatabase(url)
            environment["PUSHBRIDGE_STORE"] = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
        }
        let server = try await ProcessScenario.ServerProcess.start(database: database, extraEnvironment: environment, logDirectory: kit.directory)
        let client = HTTPClient(eventLoopGroupProvider: .singleton)
        do {
            let result = try await body(server, capture, client)
            try await client.shutdown()
            _ = await server.stop(signal: SIGTERM)
            await capture.stop()
            return result
        } catch {
            try? await client.shutdown()
            _ = await server.stop(signal: SIGTERM)
            await capture.stop()
            throw error
        }
    }

    static var serviceFixtures: String { Repository.fixtures + "/service" }

    /// `vendor/file.json`, whatever the path's prefix.
    static func name(_ path: String) -> String { path.split(separator: "/").suffix(2).joined(separator: "/") }

    /// The stores a serve process runs on here: PostgreSQL too under `make test` (with-postgres.sh).
    static let stores = [":memory:", "sqlite"] + (ProcessInfo.processInfo.environment["PUSHBRIDGE_TEST_POSTGRES_URL"].map { $0.isEmpty ? [] : ["postgres"] } ?? [])

    @Test("every service fixture passes by what reaches APNs, against a serve process on each store", arguments: Self.stores)
    func everyFixtureByItsAPNsRequests(_ store: String) async throws {
        try await Self.withServerAndCapture(store: store) { server, capture, client in
            var runner = ServiceConformanceRunner(baseURL: server.base, adminKey: testAdminKey, client: client)
            runner.capture = capture
            runner.captureTimeout = .seconds(10)
            runner.captureQuiet = .milliseconds(300)
            let report = try await runner.run(paths: [Self.serviceFixtures])
            #expect(report.results.count == Repository.fixtureFiles(under: "service").count && report.skippedCount == 0)
            for result in report.results { #expect(result.failure == nil, "\(result.path): \(result.failure?.description ?? "")\n\(server.log.suffix(3000))") }
            // The capture saw real provider tokens, signed with the team's key.
            #expect(capture.mock.requests.allSatisfy { $0.status == 200 && $0.providerToken?.teamID == DeliveryKit.teamID })
            #expect(capture.mock.requests.count >= 10)
        }
    }

    @Test("a server that is not PushBridge: vendor credentials, a device hook, vendor-only fixtures")
    func vendorOnlyFixturesWithCredentialsAndAHook() async throws {
        try await Self.withServerAndCapture(store: "sqlite") { server, capture, client in
            // The team's app, configured by its operator: every certificate the fixtures mirror,
            // Easemob and Tencent credentials.
            let created = try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"team"}"#)
            let key = try #require(created.json?["key"]?.stringValue, "\(created.text)")
            var certificates: [JSONValue] = []
            for file in Repository.fixtureFiles(under: "service") {
                let fixture = try ServiceFixture(path: file)
                for certificate in fixture.mirrored.document["app"]?["certificates"]?.arrayValue ?? [] where !certificates.contains(certificate) {
                    certificates.append(certificate)
                }
            }
            var w = JSONWriter()
            w.write(["certificates": .array(certificates)])
            let configured = try await client.call(.PUT, server.base + "/v1/apps/team", key: key, body: String(decoding: w.bytes, as: UTF8.self))
            #expect(configured.status == 200, "\(configured.text)")
            #expect(
                try await client.call(
                    .PUT, server.base + "/v1/apps/team/vendors/easemob", key: key,
                    body: #"{"org":"acme","app":"team","clientId":"YXA6-team","clientSecret":"YXA6-team-secret"}"#
                ).status == 200)
            #expect(
                try await client.call(
                    .PUT, server.base + "/v1/apps/team/vendors/tencent", key: key,
                    body: #"{"sdkAppId":1400000777,"secretKey":"0123456789abcdef0123456789abcdef","administrator":"administrator"}"#
                ).status == 200)
            let file = temporaryDirectory() + "/credentials.json"
            try #"{"easemob": {"org": "acme", "app": "team", "clientId": "YXA6-team", "clientSecret": "YXA6-team-secret"}, "tencent": {"sdkAppId": 1400000777, "secretKey": "0123456789abcdef0123456789abcdef", "administrator": "administrator"}}"#
                .write(toFile: file, atomically: true, encoding: .utf8)
            // The team's hook registers a device as its app would: here through PushBridge's native API.
            let hook = temporaryDirectory() + "/device-hook.py"
            try """
                import json, sys, urllib.request
                vendor, user, token, certificate = sys.argv[1:5]
                calls = [{"call": "setToken", "busiId": int(certificate), "token": token}, {"call": "doBackground", "c2cUnread": 0}]
                request = urllib.request.Request("\(server.base)/v1/apps/team/users/%s/calls?dialect=tencent-tim" % user,
                    data=json.dumps(calls).encode(), method="POST",
                    headers={"Authorization": "Bearer \(key)", "Content-Type": "application/json"})
                urllib.request.urlopen(request, timeout=10).read()
                """.write(toFile: hook, atomically: true, encoding: .utf8)
            var runner = ServiceConformanceRunner(baseURL: server.base, credentials: try VendorCredentials(path: file), client: client)
            runner.capture = capture
            runner.captureTimeout = .seconds(10)
            runner.captureQuiet = .milliseconds(300)
            runner.deviceHook = "python3 " + hook
            let report = try await runner.run(paths: [Self.serviceFixtures])
            let vendorOnly = try Set(Repository.fixtureFiles(under: "service").filter { try ServiceFixture(path: $0).isVendorOnly }.map(Self.name))
            #expect(vendorOnly.count >= 40 && Double(vendorOnly.count) >= 0.85 * Double(report.results.count), "\(vendorOnly.count) vendor-only of \(report.results.count)")
            #expect(report.results.count == Repository.fixtureFiles(under: "service").count)
            let everyUser = try Set(Repository.fixtureFiles(under: "service").filter { try ServiceFixture(path: $0).pushesEveryUser }.map(Self.name))
            #expect(!everyUser.isEmpty)
            for result in report.results {
                if everyUser.contains(Self.name(result.path)) {
                    // A push to every user of the app every fixture shares: skipped, with its reason.
                    #expect(result.skipped?.contains("every user") == true && !result.passed, "\(result.path): \(result.skipped ?? "ran")")
                } else if vendorOnly.contains(Self.name(result.path)) {
                    #expect(result.passed, "\(result.path): \(result.failure?.description ?? result.skipped ?? "")")
                } else {
                    #expect(result.skipped?.contains("native API") == true, "\(result.path): \(result.skipped ?? "ran")")
                }
            }
            // Without the hook, a fixture with a device step is skipped with its reason: never passed silently.
            runner.deviceHook = nil
            let skipped = await runner.run(file: Self.serviceFixtures + "/tencent/014-targeted-group-message.json")
            #expect(skipped.skipped?.contains("--device-hook") == true && !skipped.passed)
        }
    }

    @Test("the command: a CA made once, a serve process trusting it, a run with a checked provider key and a log")
    func theCommandEndToEnd() async throws {
        let kit = try DeliveryKit()
        let ca = kit.path("capture-ca.pem")
        let made = try await runOffThePool(Repository.executable, ["conform", "--capture-ca-out", ca], environment: [:])
        #expect(made.status == 0 && made.stderr.contains("wrote the capture CA"), "\(made.stderr)")
        let mode = try FileManager.default.attributesOfItem(atPath: ca + ".key")[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let port = try ProcessScenario.freePort()
        let server = try await ProcessScenario.ServerProcess.start(
            database: ":memory:",
            extraEnvironment: [
                "PUSHBRIDGE_APNS_CREDENTIALS_FILE": try kit.credentialsFile(), "PUSHBRIDGE_APNS_URL": "https://127.0.0.1:\(port)", "PUSHBRIDGE_APNS_CA_FILE": ca,
            ], logDirectory: kit.directory)
        defer { server.stopInBackground() }
        let key = try kit.write("team-key.pem", kit.key.publicKey.pemRepresentation)
        let log = kit.path("capture.jsonl")
        let run = try await runOffThePool(
            Repository.executable,
            [
                "conform", "Fixtures/service/easemob/011-group-and-binding-over-rest.json", "Fixtures/service/easemob/015-push-single.json",
                "--service", server.base, "--capture-apns", "127.0.0.1:\(port)", "--capture-ca-out", ca, "--capture-jwt-key", key, "--capture-log", log,
            ], environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey])
        #expect(run.status == 0 && run.stdout.contains("2 passed, 0 failed"), "\(run.stdout)\(run.stderr)\n\(server.log.suffix(2000))")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.allSatisfy { $0.contains("\"token\":") && $0.contains("\"iss\":\"\(DeliveryKit.teamID)\"") && $0.contains("\"status\":200") })
        #expect(lines.allSatisfy { !$0.lowercased().contains("bearer") && !$0.contains("eyJ") }, "the provider token itself never reaches the log")
        // Another team's key: APNs' 403 InvalidProviderToken — nothing delivered, the fixture fails naming it.
        let other = try kit.write("other-key.pem", P256.Signing.PrivateKey().publicKey.pemRepresentation)
        let refused = try await runOffThePool(
            Repository.executable,
            ["conform", "Fixtures/service/easemob/015-push-single.json", "--service", server.base, "--capture-apns", "127.0.0.1:\(port)", "--capture-ca-out", ca,
             "--capture-jwt-key", other, "--capture-timeout", "2"],
            environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey])
        #expect(refused.status == 1 && refused.stdout.contains("403 InvalidProviderToken"), "\(refused.stdout)")
        // Bad input: exit 2 naming the option, file or pointer (and never a secret's value).
        let address = try await runOffThePool(
            Repository.executable, ["conform", "Fixtures/service", "--service", server.base, "--capture-apns", "nowhere"], environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey])
        #expect(address.status == 2 && address.stderr.contains("--capture-apns: expected HOST:PORT") && address.stderr.contains("[invalid-value]"), "\(address.stderr)")
        let credentials = try kit.write("credentials.json", #"{"tencent": {"sdkAppId": 1400000001, "secretKey": 918273645546372819}}"#)
        let badCredentials = try await runOffThePool(
            Repository.executable, ["conform", "Fixtures/service", "--service", server.base, "--capture-apns", "127.0.0.1:0", "--vendor-credentials", credentials],
            environment: [:])
        #expect(badCredentials.status == 2 && badCredentials.stderr.contains("/tencent/secretKey"), "\(badCredentials.stderr)")
        #expect(!badCredentials.stderr.contains("918273645546372819"))
        // A run that judges nothing exits 2 naming why (unless --allow-skips), the skips counted by reason.
        let tencentOnly = try kit.write(
            "tencent-credentials.json", #"{"tencent": {"sdkAppId": 1400000001, "secretKey": "0123456789abcdef", "administrator": "administrator"}}"#)
        let skipping = ["conform", "Fixtures/service/easemob", "--service", server.base, "--capture-apns", "127.0.0.1:0", "--vendor-credentials", tencentOnly]
        let nothingJudged = try await runOffThePool(Repository.executable, skipping, environment: [:])
        #expect(nothingJudged.status == 2 && nothingJudged.stderr.contains("was skipped, so nothing was judged") && nothingJudged.stderr.contains("[all-skipped]"),
            "\(nothingJudged.stdout)\(nothingJudged.stderr)")
        #expect(nothingJudged.stdout.contains("Skipped by reason:\n") && nothingJudged.stdout.contains("the credentials file has no \"easemob\""), "\(nothingJudged.stdout)")
        let allowed = try await runOffThePool(Repository.executable, skipping + ["--allow-skips"], environment: [:])
        #expect(allowed.status == 0, "\(allowed.stdout)\(allowed.stderr)")
        // A capture the server never reaches (it delivers to another port): said once, up front.
        let elsewhere = try ProcessScenario.freePort()
        let unreached = try await runOffThePool(
            Repository.executable,
            ["conform", "Fixtures/service/easemob/015-push-single.json", "--service", server.base, "--capture-apns", "127.0.0.1:\(elsewhere)", "--capture-ca-out", ca,
             "--capture-timeout", "2"],
            environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey])
        #expect(unreached.status == 1 && unreached.stdout.hasPrefix("NOTE  the capture received no connection during the run"), "\(unreached.stdout)")
        try FileManager.default.removeItem(atPath: ca + ".key")
        let halfCA = try await runOffThePool(Repository.executable, ["conform", "Fixtures/service", "--capture-ca-out", ca], environment: [:])
        #expect(halfCA.status == 2 && halfCA.stderr.contains("found one of them"), "\(halfCA.stderr)")
        let noPaths = try await runOffThePool(Repository.executable, ["conform", "--service", server.base], environment: [:])
        #expect(noPaths.status == 2 && noPaths.stderr.contains("fixture files or folders"), "\(noPaths.stderr)")
    }

    @Test("--print-setup names what a team's app needs: certificates, users, devices, both credentials")
    func printSetupNamesWhatTheAppNeeds() async throws {
        let run = try await runOffThePool(Repository.executable, ["conform", "Fixtures/service", "--print-setup"], environment: [:])
        #expect(run.status == 0, "\(run.stderr)")
        let fixtures = Repository.fixtureFiles(under: "service").count
        #expect(run.stdout.hasPrefix("Before a black-box run of \(fixtures) service fixture(s) against your server:"), "\(run.stdout.prefix(300))")
        // Every certificate a mirrored fixture configures, once.
        for file in Repository.fixtureFiles(under: "service") {
            let mirrored = try ServiceFixture(path: file).mirrored.document
            for certificate in mirrored["app"]?["certificates"]?.arrayValue ?? [] {
                #expect(run.stdout.contains("   " + certificate.compactText + "   ("), "\(file): \(certificate.compactText)")
            }
        }
        #expect(run.stdout.contains("   easemob/015-push-single.json\n      registers users: u2\n      POST /users\n      PUT /users/u2/push/binding\n"), "\(run.stdout)")
        #expect(run.stdout.contains("      --device-hook tencent "), "the devices only a client SDK registers")
        #expect(run.stdout.contains("   tencent/012-account-import-nick.json\n      registers users: alice, bob\n"), "\(run.stdout)")
        #expect(run.stdout.contains(#""clientSecret""#) && run.stdout.contains(#""administrator""#) && run.stdout.contains("--capture-jwt-key"))
        let refused = try await runOffThePool(Repository.executable, ["conform", "Fixtures/service", "--print-setup", "--record"], environment: [:])
        #expect(refused.status == 2 && refused.stderr.contains("--print-setup only reads the fixtures"), "\(refused.stderr)")
        // A fixture that is bad input: exit 2 naming the file and the pointer, and no setup printed.
        let bad = temporaryDirectory() + "/bad-service-fixture.json"
        let mirrored = Repository.root.appendingPathComponent("Fixtures/easemob-legacy/026-silent-message.json").path
        try #"{"name": "x", "vendor": "easemob", "mirrors": "\#(mirrored)", "steps": [{"rest": "POST /users", "body": 1, "answer": {"status": "ok"}}], "send": {"rest": "POST /messages"}}"#
            .write(toFile: bad, atomically: true, encoding: .utf8)
        let badRun = try await runOffThePool(Repository.executable, ["conform", bad, "--print-setup"], environment: [:])
        #expect(badRun.status == 2 && badRun.stderr.contains(bad) && badRun.stderr.contains("/steps/0/answer"), "\(badRun.stderr)")
        #expect(badRun.stdout.isEmpty, "\(badRun.stdout)")
    }

    /// Runs service fixtures through a ``BrokenRelay`` with `bugs` in front of a serve process,
    /// judged by what reaches the capture.
    static func throughRelay(_ bugs: Set<BrokenRelay.Bug>, paths: [String]) async throws -> ConformanceReport {
        try await withServerAndCapture(store: ":memory:") { server, capture, client in
            try await BrokenRelay.run(upstream: server.base, client: client, bugs: bugs) { relay in
                var runner = ServiceConformanceRunner(baseURL: relay, adminKey: testAdminKey, client: client)
                runner.capture = capture
                runner.captureTimeout = .seconds(5)
                runner.captureQuiet = .milliseconds(300)
                return try await runner.run(paths: paths)
            }
        }
    }

    @Test("a deliberately broken relay fails the right fixtures at the right pointers")
    func theCaptureCatchesABrokenServer() async throws {
        let report = try await Self.throughRelay([.targetedToAll, .noBadge], paths: [Self.serviceFixtures + "/tencent"])
        func pointers(_ name: String) -> [String] {
            guard case .mismatch(let differences)? = report.results.first(where: { $0.path.hasSuffix(name) })?.failure else { return [] }
            return differences.map(\.pointer.description)
        }
        // Targeted to bob, pushed to carol too: the extra delivery.
        // (and counted: the badge a targeted message must not carry).
        #expect(pointers("014-targeted-group-message.json") == ["/payload/aps/badge", "/deliveries/1"], "\(report.humanText)")
        // A one-to-one send whose badge the relay dropped.
        #expect(pointers("001-sendmsg-payload-example.json") == ["/payload/aps/badge"], "\(report.humanText)")
        // What the relay does not touch still passes; what it breaks fails on the bytes, not on a request.
        for untouched in ["002-push-flag-no-push.json", "003-badge-mode-ignore.json", "005-send-group-msg.json", "015-msgflag-mentions-only.json"] {
            #expect(report.results.first { $0.path.hasSuffix(untouched) }?.passed == true, "\(untouched): \(report.humanText)")
        }
        for result in report.results where !result.passed {
            guard case .mismatch? = result.failure else { Issue.record("\(result.path): \(String(describing: result.failure))"); continue }
        }
    }

    @Test("a relay that drops the silent flag or OfflinePushInfo.Title fails exactly the fixtures that send them")
    func theCaptureCatchesADroppedSilentFlagAndTitle() async throws {
        let report = try await Self.throughRelay([.noOfflinePushTitle, .noSilentFlag], paths: [Self.serviceFixtures])
        let failed = report.results.filter { !$0.passed }.map { Self.name($0.path) }.sorted()
        #expect(failed == ["easemob/016-silent-message.json", "tencent/016-offline-push-title-alone.json"], "\(report.humanText)")
        for result in report.results where !result.passed {
            guard case .mismatch(let differences)? = result.failure else { Issue.record("\(result.path): \(String(describing: result.failure))"); continue }
            let pointers = differences.map(\.pointer.description)
            // The silent message pushed where no push belongs; the title lost: a plain-string alert.
            let expected = result.path.hasSuffix("016-silent-message.json") ? ["/push", "/payload", "/deliveries"] : ["/payload/aps/alert"]
            #expect(pointers == expected, "\(result.path): \(pointers)")
        }
    }

    @Test("a relay that drops the force flag and ignores the display style fails exactly the fixtures that rely on them")
    func theCaptureCatchesADroppedForceFlagAndDisplayStyle() async throws {
        let report = try await Self.throughRelay([.noForceFlag, .noDisplayStyle], paths: [Self.serviceFixtures + "/easemob"])
        let failed = report.results.filter { !$0.passed }.map { Self.name($0.path) }.sorted()
        let forced = ["easemob/022-forced-through-dnd.json", "easemob/024-force-beats-app-none.json"]
        let styled = [
            "easemob/001-user-fields-message-summary.json", "easemob/002-group-message-summary.json", "easemob/009-language-without-translation.json",
            "easemob/010-registration-nickname.json", "easemob/011-group-and-binding-over-rest.json", "easemob/013-unbind-one-device.json",
        ]
        #expect(failed == (forced + styled).sorted(), "\(report.humanText)")
        for result in report.results where !result.passed {
            guard case .mismatch(let differences)? = result.failure else { Issue.record("\(result.path): \(String(describing: result.failure))"); continue }
            let pointers = differences.map(\.pointer.description)
            if forced.contains(Self.name(result.path)) {
                // Held back: no push where one belongs.
                #expect(pointers.first == "/push", "\(result.path): \(pointers)")
            } else {
                // Pushed in the simple banner: the alert's text differs, nothing else.
                #expect(pointers.allSatisfy { $0.hasPrefix("/payload/aps/alert") }, "\(result.path): \(pointers)")
            }
        }
    }
}

/// A vendor REST server that is wrong on purpose: it forwards every request to PushBridge with the
/// bugs it is given.
enum BrokenRelay {
    enum Bug: Sendable {
        /// Drops `To_Account` from `send_group_msg`: a targeted message reaches every member (it still
        /// refuses one to an AVChatRoom, `av-…`).
        case targetedToAll
        /// Sends every `sendmsg` with `BadgeMode` 1 (no badge).
        case noBadge
        /// Drops `OfflinePushInfo.Title` from `sendmsg`.
        case noOfflinePushTitle
        /// Drops `ext.em_ignore_notification` from an Easemob `POST /messages`: a silent message is pushed.
        case noSilentFlag
        /// Drops `ext.em_force_notification` from every Easemob / Agora message send: a forced message is
        /// held back by do-not-disturb or a remind type.
        case noForceFlag
        /// Answers `PUT /users/{username}` as if it kept `notification_display_style` but keeps the
        /// default (0, the simple banner): the summary style is never set.
        case noDisplayStyle
    }

    static func run<T: Sendable>(
        upstream: String, client: HTTPClient, bugs: Set<Bug> = [.targetedToAll, .noBadge], _ body: @Sendable (String) async throws -> T
    ) async throws -> T {
        let router = Router()
        let forward: @Sendable (Request, BasicRequestContext) async throws -> Response = { request, _ in
            var out = HTTPClientRequest(url: upstream + request.uri.description)
            out.method = HTTPMethod(rawValue: request.method.rawValue)
            for field in request.headers where field.name != .contentLength {
                out.headers.add(name: field.name.rawName, value: field.value)
            }
            var bytes = Array(buffer: try await request.body.collect(upTo: 1 << 20))
            if case .object(var object)? = try? JSONParser.parse(bytes) {
                let path = request.uri.path
                if bugs.contains(.targetedToAll), path.hasSuffix("/send_group_msg"), object["GroupId"]?.stringValue?.hasPrefix("av-") != true {
                    object["To_Account"] = nil
                }
                if bugs.contains(.noBadge), path.hasSuffix("/sendmsg") {
                    var info = object["OfflinePushInfo"]?.objectValue ?? JSONObject()
                    var apns = info["ApnsInfo"]?.objectValue ?? JSONObject()
                    apns["BadgeMode"] = 1
                    info["ApnsInfo"] = .object(apns)
                    object["OfflinePushInfo"] = .object(info)
                }
                if bugs.contains(.noOfflinePushTitle), path.hasSuffix("/sendmsg"), var info = object["OfflinePushInfo"]?.objectValue {
                    info["Title"] = nil
                    object["OfflinePushInfo"] = .object(info)
                }
                if bugs.contains(.noSilentFlag), path.hasSuffix("/messages"), var ext = object["ext"]?.objectValue {
                    ext["em_ignore_notification"] = nil
                    object["ext"] = .object(ext)
                }
                if bugs.contains(.noForceFlag), path.contains("/messages"), var ext = object["ext"]?.objectValue {
                    ext["em_force_notification"] = nil
                    object["ext"] = .object(ext)
                }
                if bugs.contains(.noDisplayStyle), request.method == .put, path.split(separator: "/").suffix(2).first == "users",
                    object["notification_display_style"] != nil
                {
                    object["notification_display_style"] = 0
                }
                var w = JSONWriter()
                w.write(.object(object))
                bytes = w.bytes
            }
            out.body = .bytes(ByteBuffer(bytes: bytes))
            let answer = try await client.execute(out, timeout: .seconds(30))
            let data = try await answer.body.collect(upTo: 16 << 20)
            var headers = HTTPFields()
            for (name, value) in answer.headers where name.lowercased() != "content-length" && name.lowercased() != "connection" {
                if let field = HTTPField.Name(name) { headers.append(HTTPField(name: field, value: value)) }
            }
            return Response(status: .init(code: Int(answer.status.code)), headers: headers, body: .init(byteBuffer: data))
        }
        for method in [HTTPRequest.Method.get, .post, .put, .delete] { router.on("**", method: method, use: forward) }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
        return try await app.test(.live) { relay in try await body("http://127.0.0.1:\(relay.port!)") }
    }
}
