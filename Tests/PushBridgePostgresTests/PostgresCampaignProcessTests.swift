import AsyncHTTPClient
import Foundation
import PushBridgeAPNsMock
import PushBridgeJSON
import PushBridgeServiceTestSupport
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// A push task on two `pushbridge serve` nodes sharing PostgreSQL: the node running it dies by
/// `kill -9`, and the other finishes it, every receiver decided once and no device pushed twice.
@Suite("PostgreSQL push task nodes")
struct PostgresCampaignProcessTests {
    typealias ServerProcess = ProcessScenario.ServerProcess

    @Test("kill -9 of the node running a push task: the other node finishes it; every receiver pushed once")
    func theOtherNodeFinishesATask() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await freshPostgresDatabase(url)
        let kit = try DeliveryKit()
        let users = 60
        try await withMockAPNs(kit.mockConfiguration) { mock in
            mock.setDefaultAnswer(.slow(milliseconds: 5, then: .ok))
            var environment = try ProcessScenario.environment(kit, mock, concurrency: 8)
            environment["PUSHBRIDGE_STORE"] = "postgres://\(location.user)@\(location.host):\(location.port)/\(location.database)"
            environment["PUSHBRIDGE_DELIVERY_LEASE_SECONDS"] = "2"
            environment["PUSHBRIDGE_PUSH_TASK_PAGE_SIZE"] = "1"
            // Both nodes run the task's pages, each at this rate: the 61 receivers take ~5 s, so a
            // status poll slowed on a saturated machine still sees the task unfinished.
            environment["PUSHBRIDGE_PUSH_TASK_RATE"] = "6"
            environment["PUSHBRIDGE_LOG_LEVEL"] = "info"
            let a = try await ServerProcess.start(database: temporaryDirectory() + "/a", extraEnvironment: environment)
            let b = try await ServerProcess.start(database: temporaryDirectory() + "/b", extraEnvironment: environment)
            defer { b.stopInBackground() }
            try await withHTTPClient { client in
                let key = try await ProcessScenario.setUp(client, a)
                try await ProcessScenario.registerUsers(client, a, key: key, count: users)
                // Node B is asked about the app's tasks, so it runs them too (a PostgreSQL node runs an app's tasks once asked).
                #expect(try await client.call(.GET, b.base + "/v1/apps/demo/push-tasks", key: key).status == 200)
                let token = try await ProcessScenario.easemobToken(client, a, key: key)
                let accepted = try await client.call(.POST, a.base + "/acme/demo/push/task", key: token, body: #"{"pushMessage":{"title":"Sale","content":"Campaign"}}"#)
                let task = try #require(accepted.json?["data"]?.intValue, "\(accepted.text)")
                let targetsAtKill = try await ProcessScenario.killWhenDecided(client, a, key: key, task: task, count: 6)
                #expect(targetsAtKill < users, "the kill came before the task was done (\(targetsAtKill) decided)")

                // Node B finishes the task and delivers what node A had claimed once its lease lapses.
                let status = try await ProcessScenario.endedTask(client, b, key: key, task: task, seconds: 90)
                #expect(status["state"] == "finished" && status["targets"] == .int(Int64(users + 1)) && status["pushed"] == .int(Int64(users + 1)), "\(status)")
                #expect(status["deliveries"]?["queued"] == 0 && status["deliveries"]?["failed"] == 0, "\(status)")
                let resent = ProcessScenario.taskPushesResent(mock, users: users, marker: "Campaign")
                // What a crash sends again: the requests in flight plus one batch of unrecorded outcomes (as for any delivery).
                #expect(resent <= 8 + 256, "\(resent) deliveries sent again")
                print("kill -9 of the node running a push task: \(targetsAtKill) of \(users + 1) decided at the kill, \(resent) sent again")
            }
        }
    }
}
