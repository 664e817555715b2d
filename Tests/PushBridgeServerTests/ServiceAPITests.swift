import Foundation
import Hummingbird
import HummingbirdTesting
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeServer
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The native API (Specification §11) against a real server on a loopback port.
@Suite("Service API")
struct ServiceAPITests {
    /// The walk-through example (Running the service) end to end, on the in-memory twin and on SQLite: the decisions are the
    /// facade's own, a repeat returns them byte for byte, and state changes as the routes say.
    @Test(arguments: [":memory:", nil] as [String?])
    func exampleFlow(database: String?) async throws {
        try await withLiveService(database: database, mode: .router) { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let message = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/message.json"), encoding: .utf8)
            let sent = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
            #expect(sent.status == 201, "\(sent.text)")

            // The same setup through the facade directly gives the same decisions.
            let facade = PushFacade(store: MemoryStateStore())
            let examples = Repository.root.appendingPathComponent("Examples/facade")
            try await facade.configure(try Scenario.app(from: try JSONParser.parse(try Data(contentsOf: examples.appendingPathComponent("app.json"))), at: .root))
            for user in ["u1", "u2"] {
                let calls = try Scenario.calls(
                    from: try JSONParser.parse(try Data(contentsOf: examples.appendingPathComponent("\(user)-calls.json"))), at: .root, now: Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
                _ = try await facade.apply(calls.map { PushFacade.DialectCall($0.call, at: $0.at, pointer: $0.pointer) }, dialect: "agora-silent", user: user)
            }
            try await facade.setMembers(["u1", "u2", "u3"], of: "g1")
            let expected = try await facade.send(try JSONParser.parse(message), dialect: "agora-silent", now: Instant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)))
            let decisions = "[" + expected.map { String(decoding: $0.json, as: UTF8.self) }.joined(separator: ",") + "]"
            #expect(sent.text == #"{"message":"m-1","decisions":"# + decisions + "}")

            let repeated = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
            #expect(repeated.status == 200)
            #expect(repeated.text == #"{"message":"m-1","decisions":"# + decisions + #","repeat":true}"#)
            let read = try await service.call(.get, "/v1/apps/demo/messages/m-1", key: key)
            #expect(read.text == #"{"message":"m-1","decisions":"# + decisions + #","delivery":"not-configured"}"#)
            #expect(try await service.call(.get, "/v1/apps/demo/messages/m-2", key: key).status == 404)

            // The repeat counted nothing: u2's badge is 1.
            var u2 = try await service.call(.get, "/v1/apps/demo/users/u2", key: key)
            #expect(u2.json?["badge"] == .int(1))
            #expect(u2.json?["devices"]?.arrayValue?.count == 2)
            let online = try await service.call(.put, "/v1/apps/demo/users/u2/presence?dialect=agora-silent", key: key, body: #"{"presence":"online"}"#)
            #expect(online.status == 200)
            #expect(online.json?["badge"] == .int(0) && online.json?["presence"] == .string("online"))

            let token = "0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de0badc0de"
            #expect(try await service.call(.delete, "/v1/apps/demo/users/u1/devices/\(token)", key: key).status == 404, "not u1's device")
            let removed = try await service.call(.delete, "/v1/apps/demo/users/u2/devices/\(token.uppercased())", key: key)
            #expect(removed.text == #"{"removed":"\#(token)","user":"u2"}"#)
            u2 = try await service.call(.get, "/v1/apps/demo/users/u2", key: key)
            #expect(u2.json?["devices"]?.arrayValue?.count == 1)

            let added = try await service.call(.post, "/v1/apps/demo/groups/g1/members", key: key, body: #"{"members":["u4","u2"]}"#)
            #expect(added.text == #"{"group":"g1","members":["u1","u2","u3","u4"]}"#)
            let left = try await service.call(.delete, "/v1/apps/demo/groups/g1/members/u3", key: key)
            #expect(left.text == #"{"group":"g1","members":["u1","u2","u4"]}"#)
            #expect(try await service.call(.delete, "/v1/apps/demo/groups/g1/members/u3", key: key).status == 404)
            #expect(try await service.call(.delete, "/v1/apps/demo/users/u4", key: key).status == 200)
            #expect(try await service.call(.get, "/v1/apps/demo/users/u4", key: key).status == 404)
            #expect(try await service.call(.get, "/v1/apps/demo/groups/g1/members", key: key).text == #"{"group":"g1","members":["u1","u2"]}"#)

            let app = try await service.call(.get, "/v1/apps/demo", key: key)
            #expect(app.json?["certificates"]?.arrayValue?.count == 2)
            #expect(!app.text.contains(key), "the key is never echoed")
        }
    }

    /// Every app route: no key → 401, another app's key or the admin key → 403 with nothing of
    /// either app, the right key → neither; an unknown app → 404; apps are created with the admin key only.
    /// `?answer=summary`: counts in place of one decision per receiver, equal to the decisions the
    /// same message has (read back by its repeat); a repeat in summary form says so; another value is
    /// 400 at `?answer` and sends nothing.
    @Test func summaryAnswer() async throws {
        try await withLiveService(database: ":memory:", mode: .router) { service in
            let key = try await setUpExampleApp(service, app: "demo")
            // u3 has no device, u4 is not a user at all: two reasons next to pushes.
            #expect(try await service.call(.put, "/v1/apps/demo/groups/g2/members", key: key, body: #"{"members":["u1","u2","u3","u4"]}"#).status == 200)
            let message = #"{"id":"s-1","conversationId":"g2","from":"u1","to":"g2","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
            let summary = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent&answer=summary", key: key, body: message)
            #expect(summary.status == 201, "\(summary.text)")
            let full = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
            #expect(full.status == 200 && full.json?["repeat"] == .bool(true))
            let decisions = full.json?["decisions"]?.arrayValue ?? []
            #expect(decisions.count == 3, "the sender is not a receiver: \(full.text)")
            var suppressed: [String: Int] = [:]
            var pushed = 0
            for decision in decisions {
                if decision["push"] == .bool(true) { pushed += 1 } else { suppressed[decision["reason"]?.stringValue ?? "?", default: 0] += 1 }
            }
            #expect(pushed >= 1 && suppressed.values.reduce(0, +) >= 1, "pushes and suppressions: \(full.text)")
            let reasons = suppressed.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",")
            #expect(summary.text == #"{"message":"s-1","receivers":3,"pushed":\#(pushed),"suppressed":{\#(reasons)}}"#)
            let again = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent&answer=summary", key: key, body: message)
            #expect(again.status == 200 && again.text == #"{"message":"s-1","receivers":3,"pushed":\#(pushed),"suppressed":{\#(reasons)},"repeat":true}"#)

            let bad = try await service.call(
                .post, "/v1/apps/demo/messages?dialect=agora-silent&answer=counts", key: key, body: message.replacingOccurrences(of: "s-1", with: "s-2"))
            #expect(bad.status == 400 && bad.json?["error"]?["pointer"] == "?answer", "\(bad.text)")
            #expect(try await service.call(.get, "/v1/apps/demo/messages/s-2", key: key).status == 404, "nothing was sent")
        }
    }

    @Test func everyRouteChecksItsApp() async throws {
        try await withLiveService(mode: .router) { service in
            let keyA = try await setUpExampleApp(service, app: "app-a")
            let keyB = try await service.createApp("app-b")
            let routes: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/v1/apps/app-a", nil),
                (.put, "/v1/apps/app-a", "{}"),
                (.post, "/v1/apps/app-a/users/u1/calls?dialect=agora-silent", "[]"),
                (.get, "/v1/apps/app-a/users/u2", nil),
                (.put, "/v1/apps/app-a/users/u2/presence?dialect=agora-silent", #"{"presence":"offline"}"#),
                (.delete, "/v1/apps/app-a/users/u2/devices/9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0", nil),
                (.delete, "/v1/apps/app-a/users/u1", nil),
                (.get, "/v1/apps/app-a/groups/g1/members", nil),
                (.put, "/v1/apps/app-a/groups/g1/members", #"{"members":["u1"]}"#),
                (.post, "/v1/apps/app-a/groups/g1/members", #"{"members":["u9"]}"#),
                (.delete, "/v1/apps/app-a/groups/g1/members/u2", nil),
                (.post, "/v1/apps/app-a/messages?dialect=agora-silent", #"{"id":"m-x","conversationId":"g1","from":"u1","to":"g1","chatType":"GroupChat","body":{"type":"text","text":"x"}}"#),
                (.get, "/v1/apps/app-a/messages/m-x", nil),
            ]
            let before = try await service.call(.get, "/v1/apps/app-a/users/u2", key: keyA).text
            for (method, path, body) in routes {
                let none = try await service.call(method, path, key: nil, body: body)
                #expect(none.status == 401 && none.errorCode == "unauthorized", "\(method) \(path): \(none.status)")
                let wrong = try await service.call(method, path, key: "pbk_not-a-key", body: body)
                #expect(wrong.status == 401, "\(method) \(path) with a key of no app: \(wrong.status)")
                for (label, other) in [("app-b's key", keyB), ("the admin key", testAdminKey)] {
                    let reply = try await service.call(method, path, key: other, body: body)
                    #expect(reply.status == 403 && reply.errorCode == "forbidden", "\(method) \(path) with \(label): \(reply.status) \(reply.text)")
                    #expect(!reply.text.contains("app-b") && !reply.text.contains("u2") && !reply.text.contains("g1"), "\(reply.text)")
                }
                let unknown = try await service.call(method, path.replacingOccurrences(of: "app-a", with: "app-z"), key: keyA, body: body)
                #expect(unknown.status == 404 && unknown.errorCode == "unknown-app", "\(method) \(path) on an unknown app: \(unknown.status)")
            }
            #expect(try await service.call(.get, "/v1/apps/app-a/users/u2", key: keyA).text == before, "refused requests changed nothing")
            for (method, path, body) in routes {
                let reply = try await service.call(method, path, key: keyA, body: body)
                #expect(![401, 403].contains(reply.status), "\(method) \(path) with its own key: \(reply.status) \(reply.text)")
            }
            #expect(try await service.call(.post, "/v1/apps", key: nil, body: "{}").status == 401)
            #expect(try await service.call(.post, "/v1/apps", key: keyA, body: "{}").status == 403)
            #expect(try await service.call(.post, "/v1/apps", key: testAdminKey, body: #"{"app":"app-a"}"#).status == 409)
            let generated = try await service.call(.post, "/v1/apps", key: testAdminKey)
            #expect(generated.status == 201 && generated.json?["app"]?.stringValue?.hasPrefix("app-") == true, "\(generated.text)")
            for bad in ["", ".hidden", "a/b", String(repeating: "x", count: 65)] {
                let reply = try await service.call(.post, "/v1/apps", key: testAdminKey, body: #"{"app":"\#(bad)"}"#)
                #expect(reply.status == 400 && reply.json?["error"]?["pointer"] == .string("/app"), "app id \(bad): \(reply.text)")
            }
        }
    }

    /// Bad input → 400 with code, pointer, expected and found; nothing stored. Also 413, 415, 404, 405.
    @Test(arguments: [":memory:", nil] as [String?])
    func badInputIsRefusedAndChangesNothing(database: String?) async throws {
        try await withLiveService(database: database, mode: .router, { $0.bodyLimitBytes = 4_096 }) { service in
            let key = try await setUpExampleApp(service, app: "demo")
            let snapshot = { @Sendable () async throws -> [String] in
                [
                    try await service.call(.get, "/v1/apps/demo", key: key).text,
                    try await service.call(.get, "/v1/apps/demo/users/u1", key: key).text,
                    try await service.call(.get, "/v1/apps/demo/users/u2", key: key).text,
                    try await service.call(.get, "/v1/apps/demo/groups/g1/members", key: key).text,
                ]
            }
            let before = try await snapshot()
            let message = #"{"id":"m-9","conversationId":"g1","from":"u1","to":"g1","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
            let cases: [(HTTPRequest.Method, String, String, status: Int, code: String, pointer: String)] = [
                // The first call is good, the second bad: neither is applied.
                (.post, "/v1/apps/demo/users/u1/calls?dialect=agora-silent",
                 #"[{"call":"updatePushDisplayName","displayName":"Bob"},{"call":"updatePushDisplayStyle","style":"Loud"}]"#, 400, "invalid-value", "/1/style"),
                (.post, "/v1/apps/demo/users/u1/calls?dialect=agora-silent", #"[{"call":"noSuchCall"}]"#, 400, "unknown-call", "/0/call"),
                (.post, "/v1/apps/demo/users/u1/calls?dialect=agora-silent", #"{"call":"x"}"#, 400, "wrong-type", "/"),
                (.post, "/v1/apps/demo/users/u1/calls", "[]", 400, "missing-key", "?dialect"),
                (.post, "/v1/apps/demo/users/u1/calls?dialect=agora", "[]", 400, "unknown-reference", "?dialect"),
                (.put, "/v1/apps/demo", #"{"certificates":[{"name":"x","bundleId":"b","environment":"staging"}]}"#, 400, "invalid-value", "/certificates/0/environment"),
                (.put, "/v1/apps/demo", #"{"certificates":[], "extra": 1}"#, 400, "unknown-key", "/extra"),
                (.put, "/v1/apps/demo/groups/g1/members", #"{"members":["u1","u1"]}"#, 400, "invalid-value", "/members/1"),
                (.put, "/v1/apps/demo/groups/g1/members", #"{"members":"u1"}"#, 400, "wrong-type", "/members"),
                (.post, "/v1/apps/demo/groups/g1/members", #"{"members":[""]}"#, 400, "invalid-value", "/members/0"),
                (.put, "/v1/apps/demo/users/u2/presence?dialect=agora-silent", #"{"presence":"away"}"#, 400, "invalid-value", "/presence"),
                (.put, "/v1/apps/demo/users/u2/presence?dialect=agora-silent", #"{"presence":"online","backgroundSince":"2026-01-01T00:00:00Z"}"#, 400, "unknown-key", "/backgroundSince"),
                (.put, "/v1/apps/demo/users/u2/presence?dialect=agora-silent", #"{}"#, 400, "missing-key", "/presence"),
                (.put, "/v1/apps/demo/users/nobody/presence?dialect=agora-silent", #"{"presence":"online"}"#, 404, "unknown-reference", "/user"),
                (.post, "/v1/apps/demo/messages?dialect=agora-silent", #"{"id":"m-9"}"#, 400, "missing-key", "/from"),
                (.post, "/v1/apps/demo/messages?dialect=agora-silent", String(message.dropLast()), 400, "malformed-json", ""),
                (.post, "/v1/apps/demo/messages?dialect=agora-silent&profile=nope", message, 400, "unknown-reference", "?profile"),
                (.post, "/v1/apps/demo/messages?dialect=agora-silent", "[" + String(repeating: "1,", count: 3_000) + "1]", 413, "too-large", ""),
            ]
            for (method, path, body, status, code, pointer) in cases {
                let reply = try await service.call(method, path, key: key, body: body)
                #expect(reply.status == status && reply.errorCode == code, "\(method) \(path) \(body.prefix(60)): \(reply.status) \(reply.text)")
                if pointer != "" {
                    #expect(reply.json?["error"]?["pointer"] == .string(pointer), "\(path): \(reply.text)")
                }
                #expect(reply.json?["error"]?["expected"]?.stringValue?.isEmpty == false, "\(reply.text)")
            }
            let typed = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message, contentType: "text/plain")
            #expect(typed.status == 415 && typed.errorCode == "unsupported-media-type")
            #expect(try await service.call(.get, "/v1/apps/demo/messages/m-9", key: key).status == 404, "no refused message was recorded")
            #expect(try await snapshot() == before, "a refused request changed state")
            let unknown = try await service.call(.get, "/v2/anything")
            #expect(unknown.status == 404 && unknown.errorCode == "not-found")
            let method = try await service.call(.patch, "/v1/apps/demo", key: key, body: "{}")
            #expect([404, 405].contains(method.status) && method.json?["error"] != nil, "\(method.status) \(method.text)")
            // The service still answers after all of that.
            let sent = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
            #expect(sent.status == 201)
        }
    }

    /// Health, readiness and the metrics names Running the service lists.
    @Test func healthReadinessAndMetrics() async throws {
        try await withLiveService(mode: .router) { service in
            #expect(try await service.call(.get, "/healthz").text == #"{"status":"ok"}"#)
            #expect(try await service.call(.get, "/readyz").status == 200)
            let key = try await setUpExampleApp(service, app: "demo")
            let message = #"{"id":"m-1","conversationId":"g1","from":"u1","to":"g1","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
            _ = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
            _ = try await service.call(.post, "/v1/apps/demo/messages?dialect=agora-silent", key: key, body: message)
            let metrics = try await service.call(.get, "/metrics").text
            for line in [
                #"pushbridge_decisions_total{dialect="agora-silent",outcome="push"} 1"#,
                #"pushbridge_decisions_total{dialect="agora-silent",outcome="no-device"} 1"#,
                #"pushbridge_messages_total{dialect="agora-silent",repeat="false"} 1"#,
                #"pushbridge_messages_total{dialect="agora-silent",repeat="true"} 1"#,
                #"pushbridge_http_requests_total{method="POST",route="/v1/apps/{app}/messages",status="201"} 1"#,
                #"pushbridge_http_requests_total{method="POST",route="/v1/apps/{app}/messages",status="200"} 1"#,
                #"pushbridge_write_queue_depth{app="demo"} 0.0"#,
            ] {
                #expect(metrics.contains(line + "\n"), "missing: \(line)")
            }
            #expect(metrics.contains("pushbridge_http_request_duration_seconds_bucket{route=\"/v1/apps/{app}/messages\""))
            #expect(metrics.contains("pushbridge_group_commit_writes_count "))
            #expect(!metrics.contains(key) && !metrics.contains(testAdminKey))
        }
    }
}

/// The two header readers every request goes through (written on bytes for speed).
@Suite("Service headers")
struct ServiceHeaderTests {
    @Test func contentTypes() {
        for yes in ["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", " application/json ", "application/problem+json"] {
            #expect(ServiceRoutesProbe.isJSON(yes), "\(yes)")
        }
        for no in ["text/plain", "application/x-www-form-urlencoded", "", "+json", "application/jsonx", "json"] {
            #expect(!ServiceRoutesProbe.isJSON(no), "\(no)")
        }
    }

    @Test func bearerKeys() async throws {
        try await withLiveService(mode: .router) { service in
            let key = try await service.createApp("demo")
            for (header, status) in [
                ("Bearer \(key)", 200), ("bearer \(key)", 200), ("BEARER   \(key)  ", 200), ("Bearer", 401), ("Bearer ", 401),
                ("Basic \(key)", 401), ("Bearer\(key)", 401), ("Bearer \(key)x", 401), ("", 401),
            ] {
                let response = try await service.client.executeRequest(uri: "/v1/apps/demo", method: .get, headers: [.authorization: header], body: nil)
                #expect(Int(response.status.code) == status, "Authorization: \(header.replacingOccurrences(of: key, with: "KEY"))")
            }
        }
    }
}
