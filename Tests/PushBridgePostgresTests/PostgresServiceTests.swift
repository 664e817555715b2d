import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOHTTP1
import PushBridgeAPNsMock
import PushBridgeDelivery
import PushBridgeJSON
import PushBridgePostgres
import PushBridgeServer
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Two `pushbridge serve` nodes (in process, each its own HTTP server) on one PostgreSQL: an app
/// made on one is served by the other, concurrent messages on both keep every badge counter right,
/// and their delivery workers deliver every push exactly once between them.
@Suite("PostgreSQL service nodes")
struct PostgresServiceTests {
    /// One node, called with async-http-client.
    struct Node: Sendable {
        let http: HTTPClient
        let base: String

        func call(_ method: HTTPRequest.Method, _ path: String, key: String?, body: String? = nil) async throws -> Reply {
            try await http.call(NIOHTTP1.HTTPMethod(rawValue: method.rawValue), base + path, key: key, body: body)
        }
    }

    @Test("Two nodes, one database: apps, members and badges are shared; every push delivered once")
    func twoNodesShareOneDatabase() async throws {
        guard let url = testPostgresURL() else { return }
        let location = try await freshPostgresDatabase(url)
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let configure: @Sendable (inout ServiceConfiguration) -> Void = { c in
                c.usePostgres(location)
                try! ServiceDeliveryScenario.configure(&c, kit: kit, mock: mock)
            }
            try await withLiveService(database: temporaryDirectory(), configure) { liveA in
                try await withLiveService(database: temporaryDirectory(), configure) { liveB in
                  try await withHTTPClient { http in
                    // async-http-client reconnects when a node closes an idle connection (a loaded machine).
                    let a = Node(http: http, base: "http://127.0.0.1:\(liveA.port)")
                    let b = Node(http: http, base: "http://127.0.0.1:\(liveB.port)")
                    // The app and its users are made on node A.
                    let key = try await setUpExampleApp(app: "shared") { method, path, key, body in try await a.call(method, path, key: key, body: body) }
                    for user in (1...6).map({ "n\($0)" }) {
                        let token = String(repeating: String(user.utf8.last!, radix: 16), count: 32)
                        let calls = #"[{"call":"initializeSDK","appkey":"1#2","apnsCertName":"agoraTest"},{"call":"registerForRemoteNotificationsWithDeviceToken","deviceToken":"\#(token)"}]"#
                        #expect(try await a.call(.post, "/v1/apps/shared/users/\(user)/calls?dialect=agora-silent", key: key, body: calls).status == 200)
                    }
                    #expect(try await a.call(.put, "/v1/apps/shared/groups/team/members", key: key, body: #"{"members":["n1","n2","n3","n4","n5","n6"]}"#).status == 200)
                    // Node B serves the app at once (it reads the shared directory on a miss).
                    #expect(try await b.call(.get, "/v1/apps/shared/groups/team/members", key: key).json?["members"]?.arrayValue?.count == 6)
                    _ = liveA
                    _ = liveB

                    // Messages to both nodes at once.
                    let perNode = 15
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (name, node) in [("a", a), ("b", b)] {
                            group.addTask {
                                for i in 0..<perNode {
                                    let message = #"{"id":"\#(name)\#(i)","conversationId":"team","from":"n1","to":"team","chatType":"GroupChat","body":{"type":"text","text":"hi"}}"#
                                    let sent = try await node.call(.post, "/v1/apps/shared/messages?dialect=agora-silent", key: key, body: message)
                                    #expect(sent.status == 201, "\(sent.text)")
                                }
                            }
                        }
                        try await group.waitForAll()
                    }
                    // Every counter equals the pushes counted for it, read from either node.
                    for user in ["n2", "n3", "n4", "n5", "n6"] {
                        for node in [a, b] {
                            let state = try await node.call(.get, "/v1/apps/shared/users/\(user)", key: key).json
                            #expect(state?["badge"] == .int(Int64(2 * perNode)), "\(user): \(state.map { "\($0)" } ?? "")")
                        }
                    }
                    // Both workers deliver; no push goes out twice.
                    let deadline = Date().addingTimeInterval(30)
                    while mock.requests.count < 2 * perNode * 5 && Date() < deadline { try await Task.sleep(nanoseconds: 20_000_000) }
                    let ids = mock.requests.compactMap(\.apnsID)
                    #expect(ids.count == 2 * perNode * 5, "one request per push")
                    #expect(Set(ids).count == ids.count, "no delivery sent by both nodes")
                  }
                }
            }
        }
    }
}
