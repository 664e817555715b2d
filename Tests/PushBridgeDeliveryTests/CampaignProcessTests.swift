import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
import PushBridgeCore
import PushBridgeJSON
import PushBridgeServiceTestSupport
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// A push task (`POST /push/task` over Easemob REST) in a `pushbridge serve` process killed with
/// `kill -9` mid-task: the restarted process finishes it, every receiver decided once, and no device
/// gets two different pushes of the task (a delivery in flight, or whose outcome was not yet recorded,
/// at the kill may be sent again, with its one `apns-id`).
@Suite("Push task process")
struct CampaignProcessTests {
    typealias ServerProcess = ProcessScenario.ServerProcess

    @Test("kill -9 mid-task: the restarted service finishes the task; every receiver pushed once")
    func killNineMidTaskPushesEveryReceiverOnce() async throws {
        let users = 300
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            mock.setDefaultAnswer(.slow(milliseconds: 5, then: .ok))
            let database = temporaryDirectory() + "/service"
            var environment = try ProcessScenario.environment(kit, mock, concurrency: 16)
            environment["PUSHBRIDGE_PUSH_TASK_PAGE_SIZE"] = "1"
            environment["PUSHBRIDGE_PUSH_TASK_RATE"] = "50"
            environment["PUSHBRIDGE_LOG_LEVEL"] = "info"
            let first = try await ServerProcess.start(database: database, extraEnvironment: environment)
            var key = ""
            var task: Int64 = 0
            var targetsAtKill = 0
            try await withHTTPClient { client in
                let appKey = try await ProcessScenario.setUp(client, first)
                key = appKey
                try await ProcessScenario.registerUsers(client, first, key: appKey, count: users)
                let token = try await ProcessScenario.easemobToken(client, first, key: appKey)
                let accepted = try await client.call(.POST, first.base + "/acme/demo/push/task", key: token, body: #"{"pushMessage":{"title":"Sale","content":"Campaign"}}"#)
                task = try #require(accepted.json?["data"]?.intValue, "\(accepted.text)")
                // Kill once ten receivers are decided: pages of one, 50 a second, the task has seconds to go.
                targetsAtKill = try await ProcessScenario.killWhenDecided(client, first, key: key, task: task, count: 10)
            }
            #expect(first.process.terminationReason == .uncaughtSignal && first.process.terminationStatus == SIGKILL)
            #expect(targetsAtKill < users, "the kill came before the task was done (\(targetsAtKill) decided)")

            let second = try await ServerProcess.start(database: database, extraEnvironment: environment)
            defer { second.stopInBackground() }
            try await withHTTPClient { client in
                let status = try await ProcessScenario.endedTask(client, second, key: key, task: task, seconds: 60)
                // Every user of the app (k0…k299, u2 of the set-up) decided once, each pushed.
                #expect(status["state"] == "finished" && status["targets"] == .int(Int64(users + 1)) && status["pushed"] == .int(Int64(users + 1)), "\(status)")
                #expect(status["deliveries"]?["queued"] == 0 && status["deliveries"]?["failed"] == 0, "\(status)")
                let resent = ProcessScenario.taskPushesResent(mock, users: users, marker: "Campaign")
                // What a crash sends again: the requests in flight plus one batch of unrecorded outcomes (as for any delivery).
                #expect(resent <= 16 + 256, "\(resent) deliveries sent again")
                print("kill -9 mid-task: \(targetsAtKill) of \(users + 1) receivers decided at the kill, \(resent) deliveries sent again after the restart")
            }
        }
    }

    @Test("pushbridge push-task starts a task on a running service, prints its progress and its last state; follows and cancels")
    func pushTaskCommand() async throws {
        let users = 40
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            mock.setDefaultAnswer(.slow(milliseconds: 5, then: .ok))
            let database = temporaryDirectory() + "/service"
            var environment = try ProcessScenario.environment(kit, mock, concurrency: 8)
            environment["PUSHBRIDGE_PUSH_TASK_PAGE_SIZE"] = "4"
            environment["PUSHBRIDGE_PUSH_TASK_RATE"] = "40"
            let server = try await ServerProcess.start(database: database, extraEnvironment: environment)
            defer { server.stopInBackground() }
            let key = try await withHTTPClient { client in
                let key = try await ProcessScenario.setUp(client, server)
                try await ProcessScenario.registerUsers(client, server, key: key, count: users)
                return key
            }
            var tool = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("PUSHBRIDGE_") }
            tool["PUSHBRIDGE_APP_KEY"] = key
            let toolEnvironment = tool
            let message = try temporaryFile(
                #"{"id":"x","conversationId":"x","from":"shop","to":"x","chatType":"Chat","body":{"type":"text","text":"Campaign"},"ext":{"em_force_notification":true}}"#, name: "sale.json")
            let common = ["push-task", "--url", server.base, "--app", "demo", "--every", "0.1"]
            let run = try await onAThreadOfItsOwn { try runTool(common + ["--dialect", "agora-silent", message], environment: toolEnvironment) }
            #expect(run.status == 0, "\(run.stderr)")
            // The last state on stdout: every user (k0…k39 and u2, whose two devices make 42 deliveries) decided, pushed and delivered.
            let last = try JSONParser.parse(run.stdout)
            #expect(last["state"] == "finished" && last["targets"] == .int(Int64(users + 1)) && last["pushed"] == .int(Int64(users + 1)), "\(run.stdout)")
            #expect(last["deliveries"] == ["queued": 0, "delivered": .int(Int64(users + 2)), "failed": 0], "\(run.stdout)")
            // Progress on stderr (not a terminal: a line a change), counts growing to the end.
            let lines = run.stderr.split(separator: "\n").map(String.init)
            let id = try #require(last["id"]?.intValue)
            #expect(lines.count >= 3 && lines.allSatisfy { $0.hasPrefix("task \(id): ") }, "\(run.stderr)")
            #expect(lines.last == "task \(id): finished — \(users + 1) decided: \(users + 1) pushed, 0 suppressed; \(users + 2) delivered, 0 queued, 0 failed", "\(run.stderr)")
            #expect(lines.contains { $0.contains(": running — ") }, "\(run.stderr)")
            #expect(ProcessScenario.taskPushesResent(mock, users: users, marker: "pushtask-\(id)-") == 0)

            // --follow of an ended task: its state at once; --detach: the new task, not followed.
            let followed = try await onAThreadOfItsOwn { try runTool(common + ["--follow", String(id)], environment: toolEnvironment) }
            #expect(followed.status == 0 && (try? JSONParser.parse(followed.stdout))?["state"] == "finished", "\(followed.stdout) \(followed.stderr)")
            let scheduled = try await onAThreadOfItsOwn {
                try runTool(common + ["--dialect", "agora-silent", "--start-at", "2099-01-01T00:00:00Z", message], environment: toolEnvironment)
            }
            #expect(scheduled.status == 2 && scheduled.stderr.contains("\"pointer\":\"/startAt\""), "\(scheduled.stderr)")
            let later = Instant(milliseconds: Instant.now.milliseconds + 3_600_000).description
            let detached = try await onAThreadOfItsOwn {
                try runTool(common + ["--dialect", "agora-silent", "--label", "vip", "--start-at", later, "--detach", message], environment: toolEnvironment)
            }
            let waiting = try JSONParser.parse(detached.stdout)
            #expect(detached.status == 0 && waiting["state"] == "scheduled" && waiting["labels"] == ["vip"], "\(detached.stdout) \(detached.stderr)")
            let other = try #require(waiting["id"]?.intValue)
            // A sender outside ASCII travels percent-encoded (an easemob-legacy message names none of its own).
            let unnamed = try temporaryFile(#"{"target_type":"users","target":["x"],"msg":{"type":"txt","msg":"Campaign"}}"#, name: "unnamed.json")
            let fromShop = try await onAThreadOfItsOwn {
                try runTool(common + ["--dialect", "easemob-legacy", "--sender", "店铺", "--start-at", later, "--detach", unnamed], environment: toolEnvironment)
            }
            #expect(fromShop.status == 0 && (try? JSONParser.parse(fromShop.stdout))?["state"] == "scheduled", "\(fromShop.stdout) \(fromShop.stderr)")
            let cancelled = try await onAThreadOfItsOwn { try runTool(common + ["--cancel", String(other)], environment: toolEnvironment) }
            #expect(cancelled.status == 0 && (try? JSONParser.parse(cancelled.stdout))?["state"] == "cancelled", "\(cancelled.stdout) \(cancelled.stderr)")
            let followCancelled = try await onAThreadOfItsOwn { try runTool(common + ["--follow", String(other)], environment: toolEnvironment) }
            #expect(followCancelled.status == 1, "\(followCancelled.stderr)")
            // Refusals: an unknown task (2), a wrong key (2), no key (2), a service that is gone (4).
            let unknown = try await onAThreadOfItsOwn { try runTool(common + ["--follow", "12345"], environment: toolEnvironment) }
            #expect(unknown.status == 2 && unknown.stderr.contains("unknown-task"), "\(unknown.stderr)")
            let wrongKey = toolEnvironment.merging(["PUSHBRIDGE_APP_KEY": "not-the-key"]) { $1 }
            let denied = try await onAThreadOfItsOwn { try runTool(common + ["--follow", String(id)], environment: wrongKey) }
            #expect(denied.status == 2 && denied.stderr.contains("HTTP 401") && !denied.stderr.contains(key), "\(denied.stderr)")
            let noKey = toolEnvironment.filter { $0.key != "PUSHBRIDGE_APP_KEY" }
            let keyless = try await onAThreadOfItsOwn { try runTool(common + ["--follow", String(id)], environment: noKey) }
            #expect(keyless.status == 2 && keyless.stderr.contains("PUSHBRIDGE_APP_KEY"), "\(keyless.stderr)")
            let usage = try await onAThreadOfItsOwn { try runTool(common + ["--follow", String(id), message], environment: toolEnvironment) }
            #expect(usage.status == 2, "\(usage.stderr)")
            _ = await server.stop(signal: SIGTERM)
            let gone = try await onAThreadOfItsOwn { try runTool(common + ["--follow", String(id)], environment: toolEnvironment) }
            #expect(gone.status == 4 && gone.stderr.contains("did not answer"), "\(gone.stderr)")
        }
    }
}
