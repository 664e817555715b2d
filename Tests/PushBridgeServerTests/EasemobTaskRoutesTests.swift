import Foundation
import PushBridgeJSON
import PushBridgeServer
import PushBridgeServiceTestSupport
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// Easemob / Agora Chat push tasks over vendor REST (`/push/list/label`, `/push/task`) and the native
/// task API: accepted at once with the task id, every receiver decided a page at a time as a push
/// without a message, refusals in the vendor's shape changing nothing; on both stores.
@Suite("Easemob push task REST")
struct EasemobTaskRoutesTests {
    /// Waits (at most 30 s) until the task has ended; returns its status.
    static func ended(_ service: LiveService, _ app: String, key: String, _ id: Int64) async throws -> JSONValue {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let status = try await service.call(.get, "/v1/apps/\(app)/push-tasks/\(id)", key: key)
            if let state = status.json?["state"]?.stringValue, state == "finished" || state == "cancelled" { return try #require(status.json) }
            guard ContinuousClock.now < deadline else {
                Issue.record("task \(id) did not end: \(status.text)")
                return try #require(status.json)
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test("push-task-rate spaces a task's pages: its receivers take at least their count over the rate, every one decided once")
    func pacedTask() async throws {
        // 4 receivers a second: pages of one (a paced page holds at most a fiftieth of the rate), every quarter second.
        try await withLiveService(database: ":memory:", mode: .router, { $0.pushTaskPageSize = 2; $0.pushTaskRate = 4 }) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "paced")
            try await EasemobGroupRoutesTests.register(service, e, (1...7).map { "p\($0)" })
            let started = ContinuousClock.now
            let made = try await service.call(.post, "\(e.prefix)/push/task", key: e.token, body: #"{"pushMessage":{"content":"Hello all"}}"#)
            let task = try #require(made.json?["data"]?.intValue, "\(made.text)")
            let done = try await Self.ended(service, "paced", key: e.key, task)
            let took = ContinuousClock.now - started
            // bob and p1…p7: eight pages, the eighth after seven pauses of a quarter second.
            #expect(done["state"] == "finished" && done["targets"] == 8 && done["pushed"] == 1 && done["suppressed"] == ["no-device": 7], "\(done)")
            #expect(took >= .milliseconds(1_750), "8 receivers at 4 a second were decided in \(took)")
        }
    }

    @Test("a label task and a whole-app task push every receiver once; the native API reads and cancels them", arguments: [":memory:", "sqlite"])
    func tasks(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router, { $0.pushTaskPageSize = 2 }) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "tasks")
            try await EasemobGroupRoutesTests.register(service, e, ["carol", "dave", "erin"])
            let bound = try await service.call(
                .put, "\(e.prefix)/users/carol/push/binding", key: e.token,
                body: #"{"device_id":"c1","device_token":"\#(EasemobGroupRoutesTests.carolToken)","notifier_name":"dev"}"#)
            #expect(bound.status == 200, "\(bound.text)")
            #expect(try await service.call(.post, "\(e.prefix)/push/label", key: e.token, body: #"{"name":"vip"}"#).status == 200)
            #expect(try await service.call(.post, "\(e.prefix)/push/label/vip/user", key: e.token, body: #"{"usernames":["bob","carol","dave"]}"#).status == 200)
            // Refusals change nothing.
            let refusals: [(String, String, Int, String, String)] = [
                ("list/label", #"{"targets":["nope"],"pushMessage":{"content":"hi"}}"#, 400, "ResourceNotFoundException", "push label not exists of nope"),
                ("list/label", #"{"targets":["vip","vip2"],"pushMessage":{"content":"hi"}}"#, 400, "illegal_argument", "/targets"),
                ("list/label", #"{"targets":[],"pushMessage":{"content":"hi"}}"#, 400, "illegal_argument", "/targets"),
                ("list/label", #"{"targets":["vip"],"pushMessage":{"content":"hi"},"startDate":"2020-01-01 00:00:00"}"#, 400, "illegal_argument", "/startDate"),
                ("list/label", #"{"targets":["vip"],"pushMessage":{"content":"hi"},"startDate":"tomorrow"}"#, 400, "illegal_argument", "/startDate"),
                ("task", #"{"pushMessage":{"content":"hi"},"strategy":1}"#, 400, "illegal_argument", "/strategy"),
                ("task", #"{"pushMessage":{"title":"no content"}}"#, 400, "illegal_argument", "/pushMessage/content"),
                ("task", #"{"targets":["vip"],"pushMessage":{"content":"hi"}}"#, 400, "illegal_argument", "targets"),
            ]
            for (path, body, status, error, mention) in refusals {
                let reply = try await service.call(.post, "\(e.prefix)/push/\(path)", key: e.token, body: body)
                #expect(reply.status == status && reply.json?["error"] == .string(error), "\(body): \(reply.text)")
                #expect(reply.json?["error_description"]?.stringValue?.contains(mention) == true, "\(body): \(reply.text)")
            }
            #expect(try await service.call(.get, "/v1/apps/tasks/push-tasks", key: e.key).json?["tasks"] == [])
            // A label task: bob (an SDK device) and carol (a REST binding) are pushed, dave has no device.
            let labelled = try await service.call(
                .post, "\(e.prefix)/push/list/label", key: e.token, body: #"{"targets":["vip"],"pushMessage":{"title":"Sale","content":"50% off"}}"#)
            let labelTask = try #require(labelled.json?["data"]?["taskId"]?.intValue, "\(labelled.text)")
            let done = try await Self.ended(service, "tasks", key: e.key, labelTask)
            #expect(done["state"] == "finished" && done["labels"] == ["vip"] && done["targets"] == 3 && done["pushed"] == 2, "\(done)")
            #expect(done["suppressed"] == ["no-device": 1] && done["deliveries"] == ["queued": 0, "delivered": 0, "failed": 0], "\(done)")
            let carol = try await service.call(.get, "/v1/apps/tasks/messages/pushtask-\(labelTask)-carol", key: e.key)
            let decision = try #require(carol.json?["decisions"]?.arrayValue?.first, "\(carol.text)")
            #expect(decision["receiver"] == "carol" && decision["push"] == true, "\(carol.text)")
            #expect(decision["payload"]?["aps"]?["alert"]?["title"] == "Sale" && decision["payload"]?["aps"]?["alert"]?["body"] == "50% off", "\(carol.text)")
            #expect(try await service.call(.get, "/v1/apps/tasks/messages/pushtask-\(labelTask)-erin", key: e.key).status == 404)
            // A whole-app task: every user, its id a bare number.
            let everyone = try await service.call(.post, "\(e.prefix)/push/task", key: e.token, body: #"{"pushMessage":{"content":"Hello all"}}"#)
            let allTask = try #require(everyone.json?["data"]?.intValue, "\(everyone.text)")
            let all = try await Self.ended(service, "tasks", key: e.key, allTask)
            #expect(all["targets"] == 4 && all["pushed"] == 2 && all["suppressed"] == ["no-device": 2] && all["labels"] == [], "\(all)")
            // Scheduled: waits for its start; cancelled, it never runs.
            let later = Date(timeIntervalSinceNow: 7_200)
            let formatter = DateFormatter()
            formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.locale = Locale(identifier: "en_US_POSIX")
            let scheduled = try await service.call(
                .post, "\(e.prefix)/push/task", key: e.token, body: #"{"pushMessage":{"content":"later"},"startDate":"\#(formatter.string(from: later))"}"#)
            let laterTask = try #require(scheduled.json?["data"]?.intValue, "\(scheduled.text)")
            let waiting = try await service.call(.get, "/v1/apps/tasks/push-tasks/\(laterTask)", key: e.key)
            #expect(waiting.json?["state"] == "scheduled" && waiting.json?["targets"] == 0, "\(waiting.text)")
            // Three tasks in five minutes: the fourth is refused.
            let limited = try await service.call(.post, "\(e.prefix)/push/task", key: e.token, body: #"{"pushMessage":{"content":"more"}}"#)
            #expect(limited.status == 403 && limited.json?["error"] == "LimitException", "\(limited.text)")
            let cancelled = try await service.call(.post, "/v1/apps/tasks/push-tasks/\(laterTask)/cancel", key: e.key)
            #expect(cancelled.json?["state"] == "cancelled" && cancelled.json?["endedAt"] != nil, "\(cancelled.text)")
            let listed = try await service.call(.get, "/v1/apps/tasks/push-tasks", key: e.key)
            #expect(listed.json?["tasks"]?.arrayValue?.compactMap { $0["id"]?.intValue } == [laterTask, allTask, labelTask], "\(listed.text)")
            #expect(try await service.call(.get, "/v1/apps/tasks/push-tasks/12345", key: e.key).errorCode == "unknown-task")
            #expect(try await service.call(.post, "/v1/apps/tasks/push-tasks/12345/cancel", key: e.key).status == 404)
            #expect(try await service.call(.get, "/v1/apps/tasks/push-tasks/x", key: e.key).status == 400)
            #expect(try await service.call(.get, "/v1/apps/tasks/push-tasks", key: e.token).status == 401)
            let metrics = try await service.call(.get, "/metrics").text
            for line in [
                #"pushbridge_push_task_receivers_total{outcome="push"} 4"#, #"pushbridge_push_task_receivers_total{outcome="no-device"} 3"#,
                #"pushbridge_push_tasks_ended_total{state="finished"} 2"#, #"pushbridge_push_tasks_ended_total{state="cancelled"} 1"#,
            ] {
                #expect(metrics.contains(line), "\(line)")
            }
        }
    }
}
