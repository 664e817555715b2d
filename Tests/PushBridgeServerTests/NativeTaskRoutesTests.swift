import Foundation
import PushBridgeCore
import PushBridgeJSON
import PushBridgeServer
import PushBridgeServiceTestSupport
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// Push tasks made with the native API (`POST /v1/apps/{app}/push-tasks?dialect=`): one one-to-one
/// dialect message sent to each receiver of an audience and decided as that dialect decides it;
/// refusals name the pointer and change nothing; on both stores.
@Suite("Native push task API")
struct NativeTaskRoutesTests {
    static let sale = #"{"id":"x","conversationId":"x","from":"shop","to":"x","chatType":"Chat","body":{"type":"text","text":"Sale today"}}"#

    @Test("a native task sends its message to each receiver in its labels, decided as the dialect decides it", arguments: [":memory:", "sqlite"])
    func labelTask(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router, { $0.pushTaskPageSize = 2 }) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "native")
            try await EasemobGroupRoutesTests.register(service, e, ["carol", "dave", "erin"])
            for user in ["carol", "erin"] {
                let calls = #"[{"call":"initializeSDK","appkey":"acme#x","apnsCertName":"dev"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(user == "carol" ? "c" : "e")\#(String(repeating: "0", count: 63))"}]"#
                #expect(try await service.call(.post, "/v1/apps/native/users/\(user)/calls?dialect=agora-silent", key: e.key, body: calls).status == 200)
            }
            // erin silences every conversation: the chat message is not pushed to her (a native task's
            // message is the dialect's, do-not-disturb included); carol shows the default alert.
            #expect(try await service.call(.post, "/v1/apps/native/users/erin/calls?dialect=agora-silent", key: e.key, body: #"[{"call":"setSilentModeForAll","remindType":"None"}]"#).status == 200)
            #expect(try await service.call(.post, "\(e.prefix)/push/label", key: e.token, body: #"{"name":"vip"}"#).status == 200)
            #expect(try await service.call(.post, "\(e.prefix)/push/label/vip/user", key: e.token, body: #"{"usernames":["carol","dave","erin"]}"#).status == 200)

            // Refusals: each names its pointer, and none makes a task.
            let refusals: [(String, String, Int, String, String)] = [
                ("", #"{"message":\#(Self.sale)}"#, 400, "missing-key", "?dialect"),
                ("?dialect=klingon", #"{"message":\#(Self.sale)}"#, 400, "unknown-reference", "?dialect"),
                ("?dialect=agora-silent", #"{"audience":{"labels":["vip"]}}"#, 400, "missing-key", "/message"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale),"when":"now"}"#, 400, "unknown-key", "/when"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale.replacingOccurrences(of: #""chatType":"Chat""#, with: #""chatType":"GroupChat""#))}"#, 400, "invalid-value", "/message/chatType"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale.replacingOccurrences(of: #","body":{"type":"text","text":"Sale today"}"#, with: ""))}"#, 400, "missing-key", "/message/body"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale),"audience":{"labels":"vip"}}"#, 400, "wrong-type", "/audience/labels"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale),"audience":{"attributes":{"city":1}}}"#, 400, "wrong-type", "/audience/attributes/city"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale),"audience":{"tags":["vip"]}}"#, 400, "unknown-key", "/audience/tags"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale),"startAt":"2099-01-01T00:00:00Z"}"#, 400, "invalid-value", "/startAt"),
                ("?dialect=agora-silent", #"{"message":\#(Self.sale),"startAt":"soon"}"#, 400, "invalid-value", "/startAt"),
                ("?dialect=easemob-legacy", #"{"message":{"target_type":"chatgroups","target":["g"],"msg":{"type":"txt","msg":"hi"},"from":"shop"}}"#, 400, "invalid-value", "/message/target_type"),
            ]
            for (query, body, status, code, pointer) in refusals {
                let reply = try await service.call(.post, "/v1/apps/native/push-tasks\(query)", key: e.key, body: body)
                #expect(reply.status == status && reply.errorCode == code && reply.json?["error"]?["pointer"] == .string(pointer), "\(query) \(body): \(reply.text)")
            }
            #expect(try await service.call(.get, "/v1/apps/native/push-tasks", key: e.key).json?["tasks"] == [])
            #expect(try await service.call(.post, "/v1/apps/native/push-tasks?dialect=agora-silent", key: e.token, body: #"{"message":\#(Self.sale)}"#).status == 401)

            let made = try await service.call(
                .post, "/v1/apps/native/push-tasks?dialect=agora-silent", key: e.key, body: #"{"message":\#(Self.sale),"audience":{"labels":["vip"]}}"#)
            #expect(made.status == 201 && made.json?["family"] == "native" && made.json?["labels"] == ["vip"], "\(made.text)")
            let task = try #require(made.json?["id"]?.intValue, "\(made.text)")
            let done = try await EasemobTaskRoutesTests.ended(service, "native", key: e.key, task)
            #expect(done["state"] == "finished" && done["targets"] == 3 && done["pushed"] == 1, "\(done)")
            #expect(done["suppressed"] == ["muted": 1, "no-device": 1], "\(done)")
            let carol = try await service.call(.get, "/v1/apps/native/messages/pushtask-\(task)-carol", key: e.key)
            let decision = try #require(carol.json?["decisions"]?.arrayValue?.first, "\(carol.text)")
            #expect(decision["receiver"] == "carol" && decision["push"] == true && decision["payload"]?["aps"]?["alert"]?["body"] == "You have a new message", "\(carol.text)")
            #expect(try await service.call(.get, "/v1/apps/native/messages/pushtask-\(task)-bob", key: e.key).status == 404)

            // The whole app, scheduled: it waits; a fourth task in five minutes is refused.
            let later = try await service.call(
                .post, "/v1/apps/native/push-tasks?dialect=agora-silent", key: e.key,
                body: #"{"message":\#(Self.sale),"startAt":"\#(Instant(milliseconds: Instant.now.milliseconds + 3_600_000).description)"}"#)
            #expect(later.status == 201 && later.json?["state"] == "scheduled", "\(later.text)")
            _ = try await service.call(.post, "/v1/apps/native/push-tasks?dialect=agora-silent", key: e.key, body: #"{"message":\#(Self.sale)}"#)
            let limited = try await service.call(.post, "/v1/apps/native/push-tasks?dialect=agora-silent", key: e.key, body: #"{"message":\#(Self.sale)}"#)
            #expect(limited.status == 429 && limited.errorCode == "too-many-tasks", "\(limited.text)")
            #expect(try await service.call(.get, "/v1/apps/native/push-tasks", key: e.key).json?["tasks"]?.arrayValue?.count == 3)
        }
    }
}
