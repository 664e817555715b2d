import Foundation
import HTTPTypes
import NIOCore
import PushBridgeJSON
import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// A seeded campaign of hostile requests over every route: valid requests of
/// the native API, Easemob and Tencent, each sent as it is or mutated (an id with a control
/// character in the body or the path, a mutated body, a wrong media type, an odd message-id
/// header, another method, no body). Every request goes to the target service; each one it
/// accepts goes to the shadow service too, right after, so the two states must stay equal.
struct HostileCampaign {
    /// One service's set-up: the native app "demo", the Easemob app "em", the Tencent app "tim".
    struct Side {
        let service: LiveService
        let key: String
        let easemob: VendorRoutesTests.EasemobApp
        let tencent: VendorRoutesTests.TencentApp
    }

    /// A request before it is bound to a side: `{KEY}`, `{EM}` (the Easemob token) and `{TIM}`
    /// (Tencent's query) are filled in per side.
    struct Template {
        var method: HTTPRequest.Method
        var path: String
        var body: String?
        var auth: String?
        var headers: [String: String] = [:]
        var contentType: String? = "application/json"
    }

    enum Route { case native, easemob, tencent }

    struct Report {
        var sent = 0
        var accepted = 0
        var refused = 0
        var serverErrors: [String] = []
        var missingErrorBodies: [String] = []
    }

    let target: Side
    let shadow: Side
    var random: SeededRandom

    init(target: LiveService, shadow: LiveService, seed: UInt64) async throws {
        func side(_ service: LiveService) async throws -> Side {
            let key = try await setUpExampleApp(service, app: "demo")
            let routes = VendorRoutesTests()
            return Side(service: service, key: key, easemob: try await routes.easemobApp(service, "em"), tencent: try await routes.tencentApp(service, "tim"))
        }
        self.target = try await side(target)
        self.shadow = try await side(shadow)
        random = SeededRandom(seed: seed)
    }

    /// The valid requests the campaign starts from, one per route kind it exercises.
    static func seeds(_ i: Int) -> [Template] {
        let text = #"{"MsgType":"TIMTextElem","MsgContent":{"Text":"hi"}}"#
        return [
            Template(method: .post, path: "/v1/apps/demo/users/u5/calls?dialect=agora-silent", body:
                #"[{"call":"initializeSDK","appkey":"1#2","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5"}]"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/users/u6/calls?dialect=tencent-tim", body:
                #"[{"call":"setAPNS","openPush":0,"c2cSound":"c2c.caf"},{"call":"modifyGroupMemberInfoSetNameCard","groupId":"g2","user":"u6","nameCard":"six"}]"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/users/u1/calls?dialect=easemob-legacy", body:
                #"[{"call":"updatePushServiceForGroups","groupIds":["g2"],"disablePush":\#(i % 2 == 0)}]"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/users/u3/calls?dialect=agora-silent", body:
                #"[{"call":"updatePushDisplayName","displayName":"Three \#(i % 5)"},{"call":"setPreferredNotificationLanguage","languageCode":"EU"}]"#, auth: "{KEY}"),
            Template(method: .put, path: "/v1/apps/demo/groups/g2/members", body: #"{"members":["u1","u2","u5"]}"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/groups/g2/members", body: #"{"members":["u6","u3"]}"#, auth: "{KEY}"),
            Template(method: .delete, path: "/v1/apps/demo/groups/g2/members/u3", auth: "{KEY}"),
            Template(method: .put, path: "/v1/apps/demo/users/u2/presence?dialect=agora-silent", body: #"{"presence":"background","backgroundSince":"2026-03-02T09:15:00Z"}"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/messages?dialect=agora-silent", body:
                #"{"id":"c-\#(i)","conversationId":"g2","from":"u1","to":"g2","chatType":"GroupChat","body":{"type":"text","text":"hi"},"ext":{"em_at_list":["u2"]}}"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/messages?dialect=easemob-legacy", body:
                #"{"id":"e-\#(i)","target_type":"users","target":["u2","u5"],"msg":{"type":"txt","msg":"hello"},"from":"u1"}"#, auth: "{KEY}"),
            Template(method: .post, path: "/v1/apps/demo/messages?dialect=tencent-tim&sender=u1", body:
                #"{"id":"t-\#(i)","conversation":{"type":"C2C","id":"u6"},"elems":[{"type":"Text","text":"hello"}]}"#, auth: "{KEY}"),
            Template(method: .get, path: "/v1/apps/demo/users/u2", auth: "{KEY}"),
            Template(method: .get, path: "/v1/apps/demo/groups/g2/members", auth: "{KEY}"),
            Template(method: .get, path: "/v1/apps/demo/messages/c-\(max(0, i - 1))", auth: "{KEY}"),
            Template(method: .post, path: "/acme/em/messages/users", body: #"{"from":"admin","to":["bob"],"type":"txt","body":{"msg":"hi \#(i)"}}"#, auth: "{EM}"),
            Template(method: .post, path: "/acme/em/messages", body: #"{"target_type":"users","target":["bob"],"msg":{"type":"txt","msg":"hi"},"from":"admin"}"#, auth: "{EM}"),
            Template(method: .put, path: "/acme/em/users/bob", body: #"{"nickname":"Bob \#(i % 3)"}"#, auth: "{EM}"),
            Template(method: .get, path: "/acme/em/users/bob", auth: "{EM}"),
            Template(method: .post, path: "/v4/openim/sendmsg?{TIM}", body: #"{"To_Account":"bob","MsgRandom":\#(i),"MsgBody":[\#(text)]}"#),
            Template(method: .post, path: "/v4/openim/batchsendmsg?{TIM}", body: #"{"To_Account":["bob","carol"],"MsgRandom":\#(i),"MsgBody":[\#(text)]}"#),
            Template(method: .post, path: "/v4/im_open_login_svc/account_import?{TIM}", body: #"{"UserID":"dave","Nick":"Dave"}"#),
        ]
    }

    /// Ids of the seeds, and what a mutation puts in their place.
    static let ids = ["u1", "u2", "u3", "u5", "u6", "g2", "bob", "carol", "dave", "admin"]

    /// The template, mutated by the campaign's `kind`.
    mutating func mutate(_ seed: Template, kind: Int, round: Int) -> Template {
        var t = seed
        switch kind {
        case 0: break  // as it is
        case 1:
            if let body = t.body { t.body = Fuzz.mutate(body, round: round, using: &random) }
        case 2:
            // An id of the body becomes a hostile one.
            let bad = HostileInputTests.quoted(HostileInputTests.hostileIDs.randomElement(using: &random)!)
            if let body = t.body, let id = Self.ids.shuffled(using: &random).first(where: { body.contains("\"\($0)\"") }) {
                t.body = body.replacingOccurrences(of: "\"\(id)\"", with: bad)
            }
        case 3:
            // An id of the path becomes a hostile one (percent-encoded).
            let bad = HostileInputTests.path(HostileInputTests.hostileIDs.randomElement(using: &random)!)
            if let id = Self.ids.first(where: { t.path.contains("/\($0)") }) {
                t.path = t.path.replacingOccurrences(of: "/\(id)", with: "/\(bad)")
            } else {
                t.path = t.path.replacingOccurrences(of: "/demo/", with: "/demo%00/")
            }
        case 4: t.contentType = ["text/plain", "application/xml", "multipart/form-data; boundary=x"].randomElement(using: &random)!
        case 5: t.headers["PushBridge-Message-Id"] = [String(repeating: "m", count: 129), "m\tid", ""].randomElement(using: &random)!
        case 6: t.method = [.patch, .put, .delete, .get].filter { $0 != seed.method }.randomElement(using: &random)!
        case 7: t.body = nil
        default:
            // Query parameters: a missing or unknown dialect, a hostile sender, an odd sdkappid.
            t.path = t.path
                .replacingOccurrences(of: "dialect=", with: ["dialect=nope&x=", "x=", "dialect=agora-silent&sender=u%0A1&x="].randomElement(using: &random)!)
                .replacingOccurrences(of: "{TIM}", with: ["{TIM}&sdkappid=1", "identifier=administrator", "{TIM}%00"].randomElement(using: &random)!)
        }
        return t
    }

    /// Sends `count` requests.
    mutating func run(requests count: Int) async throws -> Report {
        var report = Report()
        for i in 0..<count {
            let seeds = Self.seeds(i)
            let seed = seeds[Int.random(in: 0..<seeds.count, using: &random)]
            let kind = Int.random(in: 0..<10, using: &random)
            let template = mutate(seed, kind: kind, round: i)
            let route: Route = template.path.hasPrefix("/v4/") ? .tencent : template.path.hasPrefix("/v1/") ? .native : .easemob
            let reply = try await send(template, to: target)
            report.sent += 1
            let label = "#\(i) \(template.method) \(template.path.prefix(100)) \(template.body?.prefix(160).debugDescription ?? "-")"
            if reply.status >= 500 { report.serverErrors.append("\(label) → \(reply.status) \(reply.text.prefix(200))") }
            let accepted: Bool
            switch route {
            case .tencent where reply.status == 404 || reply.status == 405:
                // Another method on a vendor path: 405 with Allow, in Tencent's own body.
                accepted = false
                if (reply.json?["ErrorCode"]?.intValue ?? 0) == 0 || reply.json?["ErrorInfo"]?.stringValue == nil {
                    report.missingErrorBodies.append("\(label) → \(reply.status) \(reply.text.prefix(200))")
                }
            case .tencent:
                accepted = reply.status == 200 && reply.json?["ErrorCode"] == .int(0)
                if !accepted && ((reply.json?["ErrorCode"]?.intValue ?? 0) == 0 || reply.json?["ErrorInfo"]?.stringValue == nil) {
                    report.missingErrorBodies.append("\(label) → \(reply.status) \(reply.text.prefix(200))")
                }
            case .native:
                accepted = (200..<300).contains(reply.status)
                if !accepted && reply.errorCode == nil { report.missingErrorBodies.append("\(label) → \(reply.status) \(reply.text.prefix(200))") }
            case .easemob:
                accepted = (200..<300).contains(reply.status)
                if !accepted && reply.json?["error"]?.stringValue == nil && reply.errorCode == nil { report.missingErrorBodies.append("\(label) → \(reply.status) \(reply.text.prefix(200))") }
            }
            if accepted {
                report.accepted += 1
                _ = try await send(template, to: shadow)
            } else {
                report.refused += 1
            }
        }
        return report
    }

    func send(_ t: Template, to side: Side) async throws -> Reply {
        var headers: HTTPFields = [:]
        let auth = t.auth?.replacingOccurrences(of: "{KEY}", with: side.key).replacingOccurrences(of: "{EM}", with: side.easemob.token)
        if let auth { headers[.authorization] = "Bearer \(auth)" }
        if t.body != nil, let type = t.contentType { headers[.contentType] = type }
        for (name, value) in t.headers { headers[HTTPField.Name(name)!] = value }
        let path = t.path.replacingOccurrences(of: "{TIM}", with: side.tencent.query())
        let response = try await side.service.client.executeRequest(uri: path, method: t.method, headers: headers, body: t.body.map { ByteBuffer(string: $0) })
        return Reply(status: Int(response.status.code), text: String(buffer: response.body), headers: response.headers)
    }

    /// A side's state as its API shows it: the native app, the Easemob and Tencent users.
    func snapshot(of service: LiveService) async throws -> [String] {
        let side = service.port == target.service.port ? target : shadow
        var out = try await HostileInputTests.snapshot(side.service, key: side.key)
        for user in ["bob", "carol", "dave", "admin"] {
            out.append(try await side.service.call(.get, "/v1/apps/em/users/\(user)", key: side.easemob.key).text)
            out.append(try await side.service.call(.get, "/v1/apps/tim/users/\(user)", key: side.tencent.key).text)
        }
        // When a device was bound is the only thing the two sides may differ in (by milliseconds).
        return out.map { $0.replacingOccurrences(of: #""boundAt":"[^"]*""#, with: #""boundAt":"…""#, options: .regularExpression) }
    }
}
