import Foundation
import PushBridgeJSON
import PushBridgeServer
import PushBridgeServiceTestSupport
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import Testing

/// Easemob / Agora Chat push labels over vendor REST (`/push/label`): the vendors' bodies and
/// answers, refusals in their shape changing nothing, on both stores.
@Suite("Easemob push label REST")
struct EasemobLabelRoutesTests {
    @Test("labels: create, get, list with a cursor, delete; refusals in the vendor's shape change nothing", arguments: [":memory:", "sqlite"])
    func labels(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "labels")
            let path = "\(e.prefix)/push/label"
            let created = try await service.call(.post, path, key: e.token, body: #"{"name":"VIP.1","description":"paying users"}"#)
            let data = try #require(created.json?["data"], "\(created.text)")
            #expect(data["name"] == "VIP.1" && data["description"] == "paying users" && data["createdAt"]?.intValue != nil && data["count"] == nil, "\(created.text)")
            #expect(created.json?["timestamp"] != nil && created.json?["duration"] != nil)
            let refusals: [(String, Int, String, String)] = [
                (#"{"name":"VIP.1"}"#, 400, "IllegalArgumentException", "already exists"),
                (#"{"name":"bad name"}"#, 400, "illegal_argument", "/name"),
                (#"{"name":"\#(String(repeating: "a", count: 65))"}"#, 400, "illegal_argument", "/name"),
                (#"{"name":"ok","description":"\#(String(repeating: "d", count: 256))"}"#, 400, "illegal_argument", "/description"),
                (#"{"name":"ok","colour":"red"}"#, 400, "illegal_argument", "colour"),
                (#"{"description":"no name"}"#, 400, "illegal_argument", "/name"),
            ]
            for (body, status, error, mention) in refusals {
                let reply = try await service.call(.post, path, key: e.token, body: body)
                #expect(reply.status == status && reply.json?["error"] == .string(error), "\(body): \(reply.text)")
                #expect(reply.json?["error_description"]?.stringValue?.contains(mention) == true, "\(body): \(reply.text)")
            }
            // Easemob's names keep their case: "vip.1" is another label.
            #expect(try await service.call(.get, "\(path)/vip.1", key: e.token).json?["error"] == "ResourceNotFoundException")
            let one = try await service.call(.get, "\(path)/VIP.1", key: e.token)
            #expect(one.json?["data"]?["count"] == 0 && one.json?["data"]?["name"] == "VIP.1", "\(one.text)")
            // 100 labels at most; listed in name order, two at a time.
            for i in 2...100 { #expect(try await service.call(.post, path, key: e.token, body: #"{"name":"l\#(String(format: "%03d", i))"}"#).status == 200) }
            let limit = try await service.call(.post, path, key: e.token, body: #"{"name":"one-more"}"#)
            #expect(limit.status == 403 && limit.json?["error"] == "LimitException", "\(limit.text)")
            var names: [String] = []
            var cursor: String?
            repeat {
                let page = try await service.call(.get, "\(path)?limit=7" + (cursor.map { "&cursor=\($0)" } ?? ""), key: e.token)
                let items = try #require(page.json?["data"]?.arrayValue, "\(page.text)")
                #expect(items.count <= 7 && items.allSatisfy { $0["count"] == 0 }, "\(page.text)")
                names += items.compactMap { $0["name"]?.stringValue }
                cursor = page.json?["cursor"]?.stringValue
            } while cursor != nil
            #expect(names == ["VIP.1"] + (2...100).map { "l" + String(format: "%03d", $0) })
            #expect(try await service.call(.get, "\(path)?limit=0", key: e.token).status == 400)
            #expect(try await service.call(.get, "\(path)?cursor=bm90LWEtY3Vyc29y", key: e.token).json?["error"] == "illegal_argument")
            // Delete: once, then unknown; a place is free again.
            let deleted = try await service.call(.delete, "\(path)/l050", key: e.token)
            #expect(deleted.status == 200 && deleted.json?["data"] == "success", "\(deleted.text)")
            #expect(try await service.call(.delete, "\(path)/l050", key: e.token).json?["error_description"] == "push label not exists of l050")
            #expect(try await service.call(.post, path, key: e.token, body: #"{"name":"one-more"}"#).status == 200)
            #expect(try await service.call(.get, "\(path)/bad%20name", key: e.token).json?["error_description"]?.stringValue?.contains("{labelname}") == true)
            #expect(try await service.call(.get, path).status == 401)
        }
    }

    @Test("a label's users: add and remove with success and fail, list with a cursor, check one", arguments: [":memory:", "sqlite"])
    func labelUsers(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "members")
            try await EasemobGroupRoutesTests.register(service, e, ["carol", "dave", "erin"])
            let path = "\(e.prefix)/push/label/vip/user"
            #expect(try await service.call(.post, path, key: e.token, body: #"{"usernames":["bob"]}"#).json?["error"] == "ResourceNotFoundException")
            #expect(try await service.call(.post, "\(e.prefix)/push/label", key: e.token, body: #"{"name":"vip"}"#).status == 200)
            let added = try await service.call(.post, path, key: e.token, body: #"{"usernames":["erin","ghost","bob","carol"]}"#)
            #expect(added.json?["data"] == ["success": ["erin", "bob", "carol"], "fail": ["ghost": "user not exists"]], "\(added.text)")
            for (body, mention) in [(#"{"usernames":[]}"#, "/usernames"), (#"{"usernames":["bob","bob"]}"#, "/usernames/1"), (#"{"users":["bob"]}"#, "users")] {
                let reply = try await service.call(.post, path, key: e.token, body: body)
                #expect(reply.status == 400 && reply.json?["error_description"]?.stringValue?.contains(mention) == true, "\(body): \(reply.text)")
            }
            let many = "[" + (1...101).map { "\"u\($0)\"" }.joined(separator: ",") + "]"
            #expect(try await service.call(.post, path, key: e.token, body: #"{"usernames":\#(many)}"#).status == 400)
            #expect(try await service.call(.get, "\(e.prefix)/push/label/vip", key: e.token).json?["data"]?["count"] == 3)
            var users: [String] = []
            var cursor: String?
            repeat {
                let page = try await service.call(.get, "\(path)?limit=2" + (cursor.map { "&cursor=\($0)" } ?? ""), key: e.token)
                let items = try #require(page.json?["data"]?.arrayValue, "\(page.text)")
                #expect(items.allSatisfy { $0["created"]?.intValue != nil }, "\(page.text)")
                users += items.compactMap { $0["username"]?.stringValue }
                cursor = page.json?["cursor"]?.stringValue
            } while cursor != nil
            #expect(users == ["bob", "carol", "erin"])
            // One label's cursor is not another list's.
            let labelsCursor = try await service.call(.get, "\(path)?limit=1", key: e.token).json?["cursor"]?.stringValue ?? ""
            #expect(try await service.call(.get, "\(e.prefix)/push/label?cursor=\(labelsCursor)", key: e.token).status == 400)
            let carol = try await service.call(.get, "\(path)/carol", key: e.token)
            #expect(carol.json?["data"]?["username"] == "carol" && carol.json?["data"]?["created"]?.intValue != nil, "\(carol.text)")
            let dave = try await service.call(.get, "\(path)/dave", key: e.token)
            #expect(dave.status == 200 && dave.json?["data"] == nil, "\(dave.text)")
            let removed = try await service.call(.delete, path, key: e.token, body: #"{"usernames":["carol","dave","ghost"]}"#)
            #expect(removed.json?["data"] == ["success": ["carol", "dave"], "fail": ["ghost": "user not exists"]], "\(removed.text)")
            #expect(try await service.call(.get, "\(e.prefix)/push/label/vip", key: e.token).json?["data"]?["count"] == 2)
            // A user deleted over REST leaves the label.
            #expect(try await service.call(.delete, "\(e.prefix)/users/erin", key: e.token).status == 200)
            #expect(try await service.call(.get, path, key: e.token).json?["data"]?.arrayValue?.compactMap { $0["username"]?.stringValue } == ["bob"])
        }
    }

    @Test("Agora Chat's label names ignore case")
    func agoraNamesIgnoreCase() async throws {
        try await withLiveService(mode: .router) { service in
            _ = try await AgoraRoutesTests.agoraApp(service, "agora-labels")
            let path = "/agora-org/agora-labels/push/label"
            let created = try await service.call(.post, path, key: AgoraRoutesTests.token(), body: #"{"name":"Aa"}"#)
            #expect(created.json?["data"]?["name"] == "Aa", "\(created.text)")
            #expect(try await service.call(.post, path, key: AgoraRoutesTests.token(), body: #"{"name":"aA"}"#).json?["error"] == "IllegalArgumentException")
            let found = try await service.call(.get, "\(path)/AA", key: AgoraRoutesTests.token())
            #expect(found.json?["data"]?["name"] == "Aa", "\(found.text)")
            #expect(try await service.call(.delete, "\(path)/aa", key: AgoraRoutesTests.token()).json?["data"] == "success")
        }
    }
}
