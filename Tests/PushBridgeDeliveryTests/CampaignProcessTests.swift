import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
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
                let deadline = Date().addingTimeInterval(60)
                while Date() < deadline {
                    let status = try await client.call(.GET, first.base + "/v1/apps/demo/push-tasks/\(task)", key: key)
                    targetsAtKill = status.json?["targets"]?.intValue.map(Int.init) ?? 0
                    if targetsAtKill >= 10 { break }
                    try await Task.sleep(nanoseconds: 20_000_000)
                }
                await first.kill9()
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
}
