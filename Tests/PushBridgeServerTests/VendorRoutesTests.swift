import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import PushBridgeConformance
import PushBridgeJSON
import PushBridgeServiceConformance
import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The vendors' REST answered by a real service on a loopback port (Specification §12): service fixtures,
/// authentication, the vendors' error shapes, and that a refused request changes nothing.
@Suite("Vendor REST service")
struct VendorRoutesTests {
    @Test("every service fixture passes through the same runner as conform --service", arguments: [":memory:", "sqlite"])
    func serviceFixtures(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil) { service in
            try await withHTTPClient { client in
                let runner = ServiceConformanceRunner(baseURL: "http://127.0.0.1:\(service.port)", adminKey: testAdminKey, client: client)
                let report = try await runner.run(paths: [Repository.fixtures + "/service"])
                #expect(report.results.count == Repository.fixtureFiles(under: "service").count && report.results.count >= 20)
                for result in report.results { #expect(result.failure == nil, "\(result.path): \(result.failure?.description ?? "")") }
            }
        }
    }

    @Test func theCommandRunsServiceFixturesAgainstAURL() async throws {
        try await withLiveService { service in
            let run = try await runOffThePool(
                Repository.executable, ["conform", "--service", "http://127.0.0.1:\(service.port)", "Fixtures/service/tencent"],
                environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey])
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            let count = Repository.fixtureFiles(under: "service/tencent").count
            #expect(count >= 6 && run.stdout.contains("\(count) passed, 0 failed"), "\(run.stdout)")
            let noKey = try await runOffThePool(Repository.executable, ["conform", "--service", "http://127.0.0.1:\(service.port)", "Fixtures/service"], environment: [:])
            #expect(noKey.status == 2 && noKey.stderr.contains("PUSHBRIDGE_ADMIN_KEY"), "\(noKey.stderr)")
        }
        // Nothing listening: exit 2 before any fixture runs.
        let port = try ProcessScenario.freePort()
        let nobody = try await runOffThePool(Repository.executable, ["conform", "--service", "http://127.0.0.1:\(port)", "Fixtures/service"],
            environment: ["PUSHBRIDGE_ADMIN_KEY": testAdminKey])
        #expect(nobody.status == 2 && nobody.stderr.contains("[unreachable]"), "\(nobody.stderr)")
        // Engine runs leave service fixtures out (they need a service).
        let engine = try runTool(["conform", "Fixtures"])
        #expect(!engine.stdout.contains("Fixtures/service/"))
    }

    @Test("a service built with no vendor family answers natively, and keeps the bindings it does not serve")
    func aServiceWithNoVendor() async throws {
        let directory = temporaryDirectory()
        let key = try await withLiveService(database: directory) { service in
            let key = try await service.createApp("plain")
            let bound = try await service.call(.put, "/v1/apps/plain/vendors/tencent", key: key, body: #"{"sdkAppId":1400000001,"secretKey":"k"}"#)
            #expect(bound.status == 200, "\(bound.text)")
            return key
        }
        try await withLiveService(database: directory, vendors: []) { service in
            let listed = try await service.call(.get, "/v1/apps/plain/vendors", key: key)
            #expect(listed.status == 200 && listed.json == ["vendors": []], "\(listed.text)")
            for method in [HTTPRequest.Method.put, .delete] {
                let refused = try await service.call(method, "/v1/apps/plain/vendors/tencent", key: key, body: method == .put ? #"{"sdkAppId":1400000002,"secretKey":"k"}"# : nil)
                #expect(refused.status == 404 && refused.json?["error"]?["expected"] == "a vendor this service serves (it serves none)", "\(refused.text)")
            }
            // The vendors' paths are no paths of this service: the native 404, in the native shape.
            for path in ["/v4/openim/sendmsg?sdkappid=1400000001&identifier=administrator&usersig=x&random=1", "/acme/app/token"] {
                let reply = try await service.call(.post, path, body: "{}")
                #expect(reply.status == 404 && reply.json?["error"]?["code"] == "not-found", "\(path): \(reply.text)")
            }
            let native = try await service.call(.get, "/v1/apps/plain/users/u1", key: key)
            #expect(native.status == 200 || native.status == 404, "\(native.text)")
        }
        // Served again, the binding is still there.
        try await withLiveService(database: directory) { service in
            let listed = try await service.call(.get, "/v1/apps/plain/vendors", key: key)
            #expect(listed.json?["vendors"]?.arrayValue?.map { $0["sdkAppId"] } == [1_400_000_001], "\(listed.text)")
        }
    }

    // MARK: Easemob

    /// An app with an Easemob binding and a token; bob has a device.
    struct EasemobApp {
        var app: String
        var key: String
        var token: String
        var secret: String
        var prefix: String { "/acme/\(app)" }
    }

    func easemobApp(_ service: LiveService, _ app: String) async throws -> EasemobApp {
        let key = try await service.createApp(app)
        _ = try await service.call(.put, "/v1/apps/\(app)", key: key, body: #"{"certificates":[{"name":"dev","bundleId":"com.example","environment":"development"}]}"#)
        let secret = "YXA6-secret-\(app)"
        let bound = try await service.call(
            .put, "/v1/apps/\(app)/vendors/easemob", key: key, body: #"{"org":"acme","app":"\#(app)","clientId":"YXA6-id","clientSecret":"\#(secret)"}"#)
        #expect(bound.status == 200, "\(bound.text)")
        #expect(!bound.text.contains(secret))
        let calls = #"[{"call":"initializeSDK","appkey":"acme#x","apnsCertName":"dev"},{"call":"bindDeviceToken","deviceToken":"a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"}]"#
        _ = try await service.call(.post, "/v1/apps/\(app)/users/bob/calls?dialect=easemob-legacy", key: key, body: calls)
        let token = try await service.call(
            .post, "/acme/\(app)/token", body: #"{"grant_type":"client_credentials","client_id":"YXA6-id","client_secret":"\#(secret)"}"#)
        #expect(token.status == 200, "\(token.text)")
        return EasemobApp(app: app, key: key, token: try #require(token.json?["access_token"]?.stringValue), secret: secret)
    }

    @Test func easemobAuthentication() async throws {
        try await withLiveService(mode: .router) { service in
            let e = try await easemobApp(service, "auth")
            let body = #"{"nickname":"Bob"}"#
            #expect(try await service.call(.put, "\(e.prefix)/users/bob", key: e.token, body: body).status == 200)
            for (key, description) in [(nil as String?, "Unable to authenticate (OAuth)"), ("pbt1.AAAA.BBBB", "Unable to authenticate (OAuth)"), (e.key, "Unable to authenticate (OAuth)")] {
                let reply = try await service.call(.put, "\(e.prefix)/users/bob", key: key, body: body)
                #expect(reply.status == 401 && reply.json?["error"] == "unauthorized" && reply.json?["error_description"]?.stringValue == description, "\(reply.text)")
            }
            let other = try await service.call(.put, "/acme/nobody/users/bob", key: e.token, body: body)
            #expect(other.status == 404 && other.json?["error"] == "organization_application_not_found", "\(other.text)")
            let wrongSecret = try await service.call(.post, "\(e.prefix)/token", body: #"{"grant_type":"client_credentials","client_id":"YXA6-id","client_secret":"nope"}"#)
            #expect(wrongSecret.status == 400 && wrongSecret.json?["error"] == "invalid_grant" && wrongSecret.json?["error_description"] == "client_secret does not match")
            let wrongGrant = try await service.call(.post, "\(e.prefix)/token", body: #"{"grant_type":"password","client_id":"YXA6-id","client_secret":"nope"}"#)
            #expect(wrongGrant.status == 400 && wrongGrant.json?["error"] == "unsupported_grant_type")
            // A token with a 1-second ttl expires.
            let short = try await service.call(.post, "\(e.prefix)/token", body: #"{"grant_type":"client_credentials","client_id":"YXA6-id","client_secret":"\#(e.secret)","ttl":1}"#)
            #expect(short.json?["expires_in"] == 1)
            try await Task.sleep(for: .milliseconds(1_100))
            let expired = try await service.call(.put, "\(e.prefix)/users/bob", key: short.json?["access_token"]?.stringValue, body: body)
            #expect(expired.status == 401 && expired.json?["error_description"] == "Unable to authenticate due to expired access token", "\(expired.text)")
            // Binding again (a new secret) revokes the tokens issued before.
            _ = try await service.call(.put, "/v1/apps/auth/vendors/easemob", key: e.key, body: #"{"org":"acme","app":"auth","clientId":"YXA6-id","clientSecret":"rotated"}"#)
            #expect(try await service.call(.put, "\(e.prefix)/users/bob", key: e.token, body: body).status == 401)
            // Another app cannot take the same org/app; the binding shows no secret.
            let key2 = try await service.createApp("other")
            let taken = try await service.call(.put, "/v1/apps/other/vendors/easemob", key: key2, body: #"{"org":"acme","app":"auth","clientId":"c","clientSecret":"s"}"#)
            #expect(taken.status == 409 && taken.errorCode == "conflict")
            let listed = try await service.call(.get, "/v1/apps/auth/vendors", key: e.key)
            #expect(listed.status == 200 && !listed.text.contains("rotated") && listed.json?["vendors"]?.arrayValue?.first?["clientId"] == "YXA6-id", "\(listed.text)")
            #expect(try await service.call(.delete, "/v1/apps/auth/vendors/easemob", key: e.key).status == 200)
            #expect(try await service.call(.put, "\(e.prefix)/users/bob", key: e.token, body: body).status == 404)
        }
    }

    @Test("a refused Easemob request answers in the vendor's shape and changes nothing")
    func easemobBadInput() async throws {
        try await withLiveService(database: nil, mode: .router) { service in
            let e = try await easemobApp(service, "bad")
            let tooMany = "{\"target_type\":\"users\",\"target\":[" + (0...600).map { "\"u\($0)\"" }.joined(separator: ",") + "],\"msg\":{\"type\":\"txt\",\"msg\":\"x\"}}"
            let cases: [(HTTPRequest.Method, String, String, Int, String, String)] = [
                (.put, "/users/bob", "{", 400, "json_parse", "line 1 column 2"),
                (.put, "/users/bob", #"{"nickname":"B","shoe_size":9}"#, 400, "illegal_argument", "/shoe_size"),
                (.put, "/users/bob", #"{"notification_display_style":"1"}"#, 400, "illegal_argument", "/notification_display_style"),
                (.put, "/users/bob", #"{"notification_no_disturbing":true,"notification_no_disturbing_start":24,"notification_no_disturbing_end":8}"#, 400, "illegal_argument",
                 "/notification_no_disturbing_start"),
                (.put, "/users/bob/notification/user/bob", #"{"ignoreDuration":604800001}"#, 400, "illegal_argument", "/ignoreDuration"),
                (.put, "/users/bob/notification/user/bob", #"{"type":"DEFAULT"}"#, 400, "illegal_argument", "/type"),
                (.put, "/users/bob/notification/room/r1", #"{"type":"ALL"}"#, 400, "illegal_argument", "/chattype"),
                (.put, "/users/bob/notification/language", #"{"translationLanguage":5}"#, 400, "illegal_argument", "/translationLanguage"),
                (.post, "/notification/template", #"{"name":"t"}"#, 400, "illegal_argument", "title_pattern and/or content_pattern"),
                (.post, "/messages", tooMany, 400, "illegal_argument", "/target"),
                (.post, "/messages", #"{"target_type":"users","target":["bob","ghost"],"msg":{"type":"txt","msg":"x"},"from":"alice"}"#, 404,
                 "service_resource_not_found", "ghost"),
                (.post, "/messages", #"{"target_type":"chatgroups","target":["nogroup"],"msg":{"type":"txt","msg":"x"}}"#, 404, "service_resource_not_found", "nogroup"),
                (.post, "/messages", #"{"target_type":"users","target":["bob"],"msg":{"type":"txt","msg":"x"},"ext":{"em_apns_ext":{"em_push_badge":"x"}}}"#, 400,
                 "illegal_argument", "/ext/em_apns_ext"),
                (.post, "/messages/users", #"{"to":["bob"],"type":"gif","body":{}}"#, 400, "illegal_argument", "/type"),
                (.post, "/messages/users", #"{"to":["bob"],"type":"txt","body":{"msg":"x","size":1}}"#, 400, "illegal_argument", "/body/size"),
            ]
            let before = try await service.call(.get, "/v1/apps/bad/users/bob", key: e.key).text
            let appBefore = try await service.call(.get, "/v1/apps/bad", key: e.key).text
            for (method, path, body, status, error, mention) in cases {
                let reply = try await service.call(method, e.prefix + path, key: e.token, body: body)
                #expect(reply.status == status && reply.json?["error"]?.stringValue == error, "\(path) \(body): \(reply.status) \(reply.text)")
                #expect(reply.json?["error_description"]?.stringValue?.contains(mention) == true, "\(path): \(reply.text)")
                #expect(reply.json?["timestamp"]?.intValue != nil && reply.json?["exception"] != nil)
            }
            #expect(try await service.call(.get, "/v1/apps/bad/users/bob", key: e.key).text == before)
            #expect(try await service.call(.get, "/v1/apps/bad", key: e.key).text == appBefore)
            #expect(try await service.call(.get, "/v1/apps/bad/users/ghost", key: e.key).status == 404)
            let unknownUser = try await service.call(.get, e.prefix + "/users/nobody/notification/language", key: e.token)
            #expect(unknownUser.status == 404 && unknownUser.json?["error"] == "service_resource_not_found")
        }
    }

    @Test("registration: users get the vendor's defaults; a duplicate refuses the whole request, on both stores", arguments: [":memory:", "sqlite"])
    func registration(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await easemobApp(service, "reg")
            let first = try await service.call(.post, "\(e.prefix)/users", key: e.token, body: #"[{"username":"u1","password":"p","nickname":"One"},{"username":"u2","password":"p"}]"#)
            #expect(first.status == 200 && first.json?["entities"]?.arrayValue?.map { $0["username"] } == ["u1", "u2"], "\(first.text)")
            #expect(first.json?["entities"]?.arrayValue?.first?["nickname"] == "One" && !first.text.contains("\"p\""))
            let again = try await service.call(.post, "\(e.prefix)/users", key: e.token, body: #"[{"username":"u3","password":"p"},{"username":"u1","password":"p"}]"#)
            #expect(again.status == 400 && again.json?["error"] == "duplicate_unique_property_exists", "\(again.text)")
            #expect(try await service.call(.get, "\(e.prefix)/users/u3", key: e.token).status == 404, "a refused request changes nothing: u3 is not registered")
            for body in [#"{"username":"Upper","password":"p"}"#, #"{"username":"u9"}"#, "[]", #"{"username":"u9","password":"p","pin":"1"}"#] {
                let bad = try await service.call(.post, "\(e.prefix)/users", key: e.token, body: body)
                #expect(bad.status == 400 && bad.json?["error"] == "illegal_argument", "\(body): \(bad.text)")
            }
            // A registered user without a device is a known receiver: the send succeeds and decides no-device.
            let sent = try await service.call(.post, "\(e.prefix)/messages/users", key: e.token, body: #"{"from":"u1","to":["u2"],"type":"txt","body":{"msg":"hi"}}"#)
            #expect(sent.status == 200, "\(sent.text)")
            #expect(try await service.call(.delete, "\(e.prefix)/users/u2", key: e.token).status == 200)
            #expect(try await service.call(.get, "\(e.prefix)/users/u2", key: e.token).status == 404)
            #expect(try await service.call(.delete, "\(e.prefix)/users/u2", key: e.token).status == 404)

            let t = try await tencentApp(service, "accounts")
            let imported = try await service.call(.post, "/v4/im_open_login_svc/account_import?" + t.query(), body: #"{"UserID":"dave","Nick":"Dave"}"#)
            #expect(imported.json?["ActionStatus"] == "OK", "\(imported.text)")
            #expect(try await service.call(.get, "/v1/apps/accounts/users/dave", key: t.key).json?["displayName"] == "Dave")
            let many = try await service.call(.post, "/v4/im_open_login_svc/multiaccount_import?" + t.query(), body: #"{"Accounts":["erin","frank"]}"#)
            #expect(many.json?["FailAccounts"] == [], "\(many.text)")
            let check = try await service.call(.post, "/v4/im_open_login_svc/account_check?" + t.query(), body: #"{"CheckItem":[{"UserID":"erin"},{"UserID":"nobody"}]}"#)
            #expect(check.json?["ResultItem"]?.arrayValue?.map { $0["AccountStatus"] } == ["Imported", "NotImported"], "\(check.text)")
            let deleted = try await service.call(.post, "/v4/im_open_login_svc/account_delete?" + t.query(), body: #"{"DeleteItem":[{"UserID":"erin"},{"UserID":"nobody"}]}"#)
            #expect(deleted.json?["ResultItem"]?.arrayValue?.map { $0["ResultCode"] } == [0, 70107], "\(deleted.text)")
            let bad = try await service.call(.post, "/v4/im_open_login_svc/account_import?" + t.query(), body: #"{"UserID":"","Nick":"x"}"#)
            #expect(bad.json?["ErrorCode"] == 70402, "\(bad.text)")
        }
    }

    /// Every REST request of the service fixtures, mutated (byte flips, truncation, odd values and
    /// types): each is answered in the vendor's shape — never 5xx, Tencent always 200 with an
    /// `ActionStatus` — and the service keeps serving.
    @Test func fuzzedVendorBodiesAreAllAnsweredInTheVendorsShape() async throws {
        try await withLiveService(database: nil, mode: .router) { service in
            let e = try await easemobApp(service, "fuzz")
            let t = try await tencentApp(service, "fuzztim")
            var random = SeededRandom(seed: 20_261_123)
            var counts: [String: Int] = [:]
            for file in Repository.fixtureFiles(under: "service") {
                let document = try fixtureDocument(file)
                let vendor = document["vendor"]?.stringValue ?? ""
                for request in (document["steps"]?.arrayValue ?? []) + [document["send"] ?? .null] {
                    guard let line = request["rest"]?.stringValue, let body = request["body"] else { continue }
                    let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
                    let method = HTTPRequest.Method(rawValue: parts[0])!
                    let path = vendor == "easemob" ? e.prefix + parts[1] : parts[1] + "?" + t.query()
                    for round in 0..<12 {
                        let mutated = Fuzz.mutate(body.compactText, round: round, using: &random)
                        let reply = try await service.call(method, path, key: vendor == "easemob" ? e.token : nil, body: mutated)
                        let what = "\(line) with \(mutated.debugDescription): \(reply.status) \(reply.text)"
                        if vendor == "easemob" {
                            #expect(reply.status < 500, "\(what)")
                            if reply.status >= 400 {
                                let json = reply.json
                                let shaped: Bool = json?["error"]?.stringValue != nil && json?["error_description"]?.stringValue != nil
                                #expect(shaped, "\(what)")
                            }
                            counts["easemob \(reply.status < 300 ? "accepted" : "refused")", default: 0] += 1
                        } else {
                            #expect(reply.status == 200, "\(what)")
                            let status = reply.json?["ActionStatus"]?.stringValue
                            let code: Int64 = reply.json?["ErrorCode"]?.intValue ?? 0
                            let answered: Bool = status == "OK" || (status == "FAIL" && code > 0)
                            #expect(answered, "\(what)")
                            let storeFailure: Bool = code == 70500 || code == 70169
                            #expect(!storeFailure, "no store failure: \(what)")
                            counts["tencent \(status == "OK" ? "accepted" : "refused")", default: 0] += 1
                        }
                    }
                }
            }
            #expect(counts.count == 4, "mutations hit both paths of both vendors: \(counts)")
            #expect(try await service.call(.get, "/healthz").status == 200)
        }
    }

    @Test func easemobSettingsReadBack() async throws {
        try await withLiveService(mode: .router) { service in
            let e = try await easemobApp(service, "settings")
            let user = try await service.call(
                .put, "\(e.prefix)/users/bob", key: e.token,
                body: #"{"nickname":"Bob","notification_display_style":1,"notification_no_disturbing":true,"notification_no_disturbing_start":"22","notification_no_disturbing_end":"0"}"#)
            let entity = user.json?["entities"]?.arrayValue?.first
            #expect(entity?["nickname"] == "Bob" && entity?["notification_display_style"] == 1 && entity?["notification_no_disturbing"] == true)
            #expect(entity?["notification_no_disturbing_start"] == 22 && entity?["notification_no_disturbing_end"] == 0, "\(user.text)")
            #expect(user.json?["organization"] == "acme" && user.json?["applicationName"] == "settings" && user.json?["action"] == "put")
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let set = try await service.call(
                .put, "\(e.prefix)/users/bob/notification/chatgroup/g1", key: e.token, body: #"{"type":"AT","ignoreDuration":60000}"#)
            let data = set.json?["data"]
            #expect(data?["type"] == "AT", "\(set.text)")
            let expiry = try #require(data?["ignoreDuration"]?.intValue)
            #expect(expiry >= before + 60_000 && expiry < before + 70_000, "the answer turns the duration into its absolute expiry")
            let read = try await service.call(.get, "\(e.prefix)/users/bob/notification/chatgroup/g1", key: e.token)
            #expect(read.json?["data"] == data)
            let app = try await service.call(.put, "\(e.prefix)/users/bob/notification/user/bob", key: e.token, body: #"{"type":"NONE","ignoreInterval":"21:30-08:00"}"#)
            #expect(app.json?["data"]?["type"] == "NONE" && app.json?["data"]?["ignoreInterval"] == "21:30-08:00", "\(app.text)")
            let language = try await service.call(.put, "\(e.prefix)/users/bob/notification/language", key: e.token, body: #"{"translationLanguage":"EU"}"#)
            #expect(language.json?["data"] == ["language": "EU"])
            let template = try await service.call(.post, "\(e.prefix)/notification/template", key: e.token, body: #"{"name":"t1","title_pattern":"Hi {0}","content_pattern":"{0}"}"#)
            #expect(template.json?["data"]?["name"] == "t1" && template.json?["data"]?["createAt"]?.intValue != nil)
            #expect(try await service.call(.get, "\(e.prefix)/notification/template/t1", key: e.token).json?["data"]?["title_pattern"] == "Hi {0}")
            #expect(try await service.call(.delete, "\(e.prefix)/notification/template/t1", key: e.token).status == 200)
            #expect(try await service.call(.get, "\(e.prefix)/notification/template/t1", key: e.token).status == 404)
            // The new send API answers each receiver's message id; the same PushBridge-Message-Id again is a repeat.
            var headers: HTTPFields = [.authorization: "Bearer \(e.token)", .contentType: "application/json"]
            headers[HTTPFields.Element.Name("PushBridge-Message-Id")!] = "retry-1"
            let body = #"{"from":"alice","to":["bob"],"type":"txt","body":{"msg":"hi"}}"#
            for _ in 0..<2 {
                let sent = try await service.client.executeRequest(uri: "\(e.prefix)/messages/users", method: .post, headers: headers, body: ByteBuffer(string: body))
                let json = try JSONParser.parse(String(buffer: sent.body))
                #expect(sent.status == .ok && json["data"] == ["bob": "retry-1"], "\(String(buffer: sent.body))")
            }
            let state = try await service.call(.get, "/v1/apps/settings/users/bob", key: e.key)
            #expect(state.json?["badge"] == 0 || state.json?["badge"] == 1, "\(state.text)")
        }
    }

    // MARK: Tencent

    struct TencentApp {
        var app: String
        var key: String
        var sdkAppID: UInt64
        var secret: String
        func query(identifier: String = "administrator", secret: String? = nil, time: Int64? = nil, expire: Int64 = 3600) -> String {
            let sig = UserSig.generate(
                sdkAppID: sdkAppID, identifier: identifier, secretKey: secret ?? self.secret, time: time ?? Int64(Date().timeIntervalSince1970), expire: expire)
            return "sdkappid=\(sdkAppID)&identifier=\(identifier)&usersig=\(sig)&random=42&contenttype=json"
        }
    }

    func tencentApp(_ service: LiveService, _ app: String) async throws -> TencentApp {
        let key = try await service.createApp(app)
        _ = try await service.call(.put, "/v1/apps/\(app)", key: key, body: #"{"certificates":[{"busiId":2383,"bundleId":"com.example","environment":"development"}]}"#)
        let t = TencentApp(app: app, key: key, sdkAppID: 1_400_000_000 + UInt64(app.utf8.count), secret: "secret-of-\(app)")
        let bound = try await service.call(.put, "/v1/apps/\(app)/vendors/tencent", key: key, body: #"{"sdkAppId":\#(t.sdkAppID),"secretKey":"\#(t.secret)"}"#)
        #expect(bound.status == 200 && !bound.text.contains(t.secret), "\(bound.text)")
        for user in ["bob", "carol"] {
            _ = try await service.call(
                .post, "/v1/apps/\(app)/users/\(user)/calls?dialect=tencent-tim", key: key,
                body: #"[{"call":"setToken","busiId":2383,"token":"0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f\#(user == "bob" ? "0" : "1")"}]"#)
        }
        return t
    }

    @Test("Tencent's own error codes, in a 200 FAIL envelope, and nothing stored")
    func tencentErrors() async throws {
        try await withLiveService(database: nil, mode: .router) { service in
            let t = try await tencentApp(service, "tim")
            let text = #"{"To_Account":"bob","MsgRandom":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#
            let before = try await service.call(.get, "/v1/apps/tim/users/bob", key: t.key).text
            let now = Int64(Date().timeIntervalSince1970)
            let cases: [(String, String, Int)] = [
                ("/v4/openim/sendmsg?identifier=administrator", text, 60012),
                ("/v4/openim/sendmsg?sdkappid=1&identifier=administrator&usersig=x", text, 70020),
                ("/v4/openim/sendmsg?sdkappid=\(t.sdkAppID)&identifier=administrator", text, 70002),
                ("/v4/openim/sendmsg?" + t.query(secret: "wrong"), text, 70009),
                ("/v4/openim/sendmsg?" + t.query(time: now - 7200), text, 70001),
                ("/v4/openim/sendmsg?" + t.query().replacingOccurrences(of: "identifier=administrator", with: "identifier=bob"), text, 70013),
                ("/v4/openim/sendmsg?" + t.query(identifier: "bob"), text, 60010),
                ("/v4/openim/nosuch?" + t.query(), text, 60009),
                ("/v4/openim/sendmsg?" + t.query(), "{", 90001),
                ("/v4/openim/sendmsg?" + t.query(), #"{"To_Account":"bob","MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#, 90005),
                ("/v4/openim/sendmsg?" + t.query(), #"{"To_Account":"ghost","MsgRandom":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#, 70107),
                ("/v4/openim/sendmsg?" + t.query(), #"{"To_Account":"bob","MsgRandom":1,"MsgBody":{"MsgType":"TIMTextElem"}}"#, 90002),
                ("/v4/group_open_http_svc/send_group_msg?" + t.query(), #"{"GroupId":"nogroup","Random":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#, 10010),
                ("/v4/group_open_http_svc/send_group_msg?" + t.query(), "[", 10011),
                // A targeted group message names 1–50 distinct members.
                ("/v4/group_open_http_svc/send_group_msg?" + t.query(), #"{"GroupId":"nogroup","Random":2,"To_Account":["bob","bob"],"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#, 10004),
            ]
            for (path, body, code) in cases {
                let reply = try await service.call(.post, path, body: body)
                #expect(reply.status == 200 && reply.json?["ActionStatus"] == "FAIL" && reply.json?["ErrorCode"]?.intValue == Int64(code), "\(path): \(reply.text)")
                #expect(reply.json?["ErrorInfo"]?.stringValue?.isEmpty == false)
                #expect(!reply.text.contains(t.secret))
            }
            #expect(try await service.call(.get, "/v1/apps/tim/users/bob", key: t.key).text == before)
            #expect(try await service.call(.get, "/v1/apps/tim/users/ghost", key: t.key).status == 404)
        }
    }

    @Test func tencentSends() async throws {
        try await withLiveService(mode: .router) { service in
            let t = try await tencentApp(service, "sends")
            let body = #"{"From_Account":"alice","To_Account":"bob","MsgRandom":77,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"hi"}}]}"#
            let first = try await service.call(.post, "/v4/openim/sendmsg?" + t.query(), body: body)
            #expect(first.json?["ActionStatus"] == "OK" && first.json?["MsgKey"] == "c2c-alice-bob-77", "\(first.text)")
            // The same MsgRandom again is Tencent's duplicate: the same message, counted once.
            let again = try await service.call(.post, "/v4/openim/sendmsg?" + t.query(), body: body)
            #expect(again.json?["ActionStatus"] == "OK")
            #expect(try await service.call(.get, "/v1/apps/sends/users/bob", key: t.key).json?["badge"] == 1)
            // batchsendmsg: unknown receivers are listed, the others sent.
            let batch = try await service.call(
                .post, "/v4/openim/batchsendmsg?" + t.query(),
                body: #"{"To_Account":["bob","ghost","carol"],"MsgRandom":78,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"all"}}]}"#)
            #expect(batch.json?["ActionStatus"] == "OK" && batch.json?["ErrorList"] == [["To_Account": "ghost", "ErrorCode": 70107]], "\(batch.text)")
            #expect(try await service.call(.get, "/v1/apps/sends/users/carol", key: t.key).json?["badge"] == 1)
            // A group send.
            _ = try await service.call(.put, "/v1/apps/sends/groups/@TGS%231/members", key: t.key, body: #"{"members":["alice","bob","carol"]}"#)
            let group = try await service.call(
                .post, "/v4/group_open_http_svc/send_group_msg?" + t.query(),
                body: #"{"GroupId":"@TGS#1","From_Account":"alice","Random":5,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"g"}}],"OnlineOnlyFlag":1}"#)
            #expect(group.json?["ActionStatus"] == "OK" && group.json?["MsgSeq"]?.intValue != nil, "\(group.text)")
            let decisions = try await service.call(.get, "/v1/apps/sends/messages/group-@TGS%231-alice-5", key: t.key)
            #expect(decisions.json?["decisions"]?.arrayValue?.allSatisfy { $0["reason"] == "ignored" } == true, "an online-only message is never pushed: \(decisions.text)")
            // A UserSig that verified is remembered, until the binding changes: a new secret key refuses it.
            let query = t.query()
            #expect(try await service.call(.post, "/v4/openim/sendmsg?" + query, body: body).json?["ActionStatus"] == "OK")
            _ = try await service.call(.put, "/v1/apps/sends/vendors/tencent", key: t.key, body: #"{"sdkAppId":\#(t.sdkAppID),"secretKey":"rotated"}"#)
            #expect(try await service.call(.post, "/v4/openim/sendmsg?" + query, body: body).json?["ErrorCode"] == 70009)
        }
    }

    @Test func aUserSigCompressedOrSpacedAnotherWayIsTheSameSignature() async throws {
        try await withLiveService(database: nil, mode: .router) { service in
            let t = try await tencentApp(service, "spell")
            let body = #"{"To_Account":"bob","MsgRandom":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#
            func send(_ sig: String) async throws -> Reply {
                let query = "sdkappid=\(t.sdkAppID)&identifier=administrator&usersig=\(sig)&random=42&contenttype=json"
                return try await service.call(.post, "/v4/openim/sendmsg?" + query, body: body)
            }
            func userSig(secret: String) -> String {
                UserSig.generate(sdkAppID: t.sdkAppID, identifier: "administrator", secretKey: secret, time: Int64(Date().timeIntervalSince1970), expire: 3600)
            }
            let genuine = userSig(secret: t.secret)
            // Python's generator (json.dumps, zlib level 6), stored blocks, level 1, compact: the same signature,
            // each verified on its own before it is remembered.
            let spellings = [genuine] + [(6, true), (0, false), (1, true), (9, true)].compactMap { CredentialSpellings.userSig(genuine, level: $0, spaced: $1) }
            #expect(Set(spellings).count == spellings.count)
            for sig in spellings + [genuine] {
                let reply = try await send(sig)
                #expect(reply.json?["ErrorCode"] == 0, "\(sig.prefix(24)): \(reply.text)")
            }
            // Another key's UserSig respelled after the genuine one is remembered: refused.
            let forged = try #require(CredentialSpellings.userSig(userSig(secret: "wrong"), level: 6))
            #expect(try await send(forged).json?["ErrorCode"] == 70009)
        }
    }

    @Test("Examples/vendor-rest/drop_in.py: a real UserSig from Tencent's generator and an Easemob token flow")
    func pythonDropIn() async throws {
        let python = try? await runOffThePool("/usr/bin/env", ["python3", "--version"], environment: nil)
        guard python?.status == 0 else {
            print("◇ skipped: python3 is not installed (Examples/vendor-rest/drop_in.py not run)")
            return
        }
        let module = try await runOffThePool("/usr/bin/env", ["python3", "-c", "import TLSSigAPIv2"], environment: nil)
        #expect(module.status == 0, "python3 is present but tls-sig-api-v2 is not: `make test` installs it (pip install tls-sig-api-v2)")
        guard module.status == 0 else { return }
        try await withLiveService { service in
            var environment = ProcessInfo.processInfo.environment
            environment["PUSHBRIDGE_URL"] = "http://127.0.0.1:\(service.port)"
            environment["PUSHBRIDGE_ADMIN_KEY"] = testAdminKey
            // The suite runs in parallel on a shared machine: a request is bounded, but not by a user's 10 s.
            environment["PUSHBRIDGE_TIMEOUT_SECONDS"] = "60"
            let run = try await runOffThePool(
                "/usr/bin/env", ["python3", Repository.root.appendingPathComponent("Examples/vendor-rest/drop_in.py").path], environment: environment)
            #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
            #expect(run.stdout.hasSuffix("all checks passed\n"), "\(run.stdout)")
        }
    }
}

/// Runs a program on a dispatch thread (not the concurrency pool, which the in-process service needs).
func runOffThePool(_ program: String, _ arguments: [String], environment: [String: String]?) async throws -> ToolRun {
    try await onAThreadOfItsOwn { try runProgram(program, arguments, environment: environment) }
}
