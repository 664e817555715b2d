import Foundation
import PushBridgeJSON
import PushBridgeServer
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Easemob / Agora Chat groups, device binding, push without a message and `cmd` over vendor REST
/// (Specification §14), on both stores.
@Suite("Easemob groups, binding and push REST")
struct EasemobGroupRoutesTests {
    static let devToken = "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"
    static let carolToken = "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0"

    /// The decisions of the messages a vendor send made (its `PushBridge-Messages`).
    static func decisions(_ service: LiveService, _ app: String, key: String, _ reply: Reply) async throws -> [JSONValue] {
        let ids = try #require(reply.headers[.init("PushBridge-Messages")!], "\(reply.text)")
        var out: [JSONValue] = []
        for id in ids.split(separator: ",") {
            let read = try await service.call(.get, "/v1/apps/\(app)/messages/\(id)", key: key)
            out += read.json?["decisions"]?.arrayValue ?? []
        }
        return out
    }

    static func register(_ service: LiveService, _ e: VendorRoutesTests.EasemobApp, _ users: [String]) async throws {
        let body = "[" + users.map { #"{"username":"\#($0)","password":"p"}"# }.joined(separator: ",") + "]"
        let reply = try await service.call(.post, "\(e.prefix)/users", key: e.token, body: body)
        #expect(reply.status == 200, "\(reply.text)")
    }

    @Test("every group of the app with Easemob's cursor, and a user's groups, on both stores", arguments: [":memory:", "sqlite"])
    func groupLists(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "lists")
            try await Self.register(service, e, ["alice", "carol"])  // bob: easemobApp made him
            var ids: [String] = []
            for (name, members) in [("one", #","members":["bob"]"#), ("two", #","members":["bob","carol"]"#), ("three", "")] {
                let created = try await service.call(
                    .post, "\(e.prefix)/chatgroups", key: e.token, body: #"{"groupname":"\#(name)","public":true,"owner":"alice"\#(members)}"#)
                ids.append(try #require(created.json?["data"]?["groupid"]?.stringValue, "\(created.text)"))
            }
            // A group the native API built (no profile) is listed too, with an empty name.
            #expect(try await service.call(.put, "/v1/apps/lists/groups/native-1/members", key: e.key, body: #"{"members":["bob"]}"#).status == 200)
            let all = (ids + ["native-1"]).sorted()
            var seen: [String] = []
            var cursor: String?
            repeat {
                let page = try await service.call(.get, "\(e.prefix)/chatgroups?limit=3" + (cursor.map { "&cursor=\($0)" } ?? ""), key: e.token)
                let data = try #require(page.json?["data"]?.arrayValue, "\(page.text)")
                #expect(page.json?["count"] == .int(Int64(data.count)) && data.count <= 3, "\(page.text)")
                seen += data.compactMap { $0["groupid"]?.stringValue }
                if let first = data.first, first["groupid"] == .string(ids[1]) {
                    #expect(first["groupname"] == "two" && first["owner"] == "alice" && first["affiliations"] == 3 && first["type"] == "group", "\(page.text)")
                }
                cursor = page.json?["cursor"]?.stringValue
            } while cursor != nil
            #expect(seen == all)
            #expect(try await service.call(.get, "\(e.prefix)/chatgroups?limit=101", key: e.token).status == 400)
            let forged = try await service.call(.get, "\(e.prefix)/chatgroups?cursor=bm90LWEtY3Vyc29y", key: e.token)
            #expect(forged.status == 400 && forged.json?["error"] == "illegal_argument", "\(forged.text)")
            // A user's groups, whole or a page.
            let bobs = try await service.call(.get, "\(e.prefix)/users/bob/joined_chatgroups", key: e.token)
            #expect(bobs.json?["data"]?.arrayValue?.compactMap { $0["groupid"]?.stringValue } == [ids[0], ids[1], "native-1"].sorted(), "\(bobs.text)")
            #expect(bobs.json?["data"]?.arrayValue?.first { $0["groupid"] == .string(ids[0]) }?["groupname"] == "one")
            let paged = try await service.call(.get, "\(e.prefix)/users/carol/joined_chatgroups?pagesize=1&pagenum=2", key: e.token)
            #expect(paged.json?["data"] == [] && paged.json?["count"] == 0 && paged.json?["params"]?["pagenum"] == ["2"], "\(paged.text)")
            #expect(try await service.call(.get, "\(e.prefix)/users/ghost/joined_chatgroups", key: e.token).status == 404)
        }
    }

    @Test("a group's whole life over REST, the native API seeing the same members", arguments: [":memory:", "sqlite"])
    func groupLifecycle(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "groups")
            try await Self.register(service, e, ["alice", "carol", "dave", "erin"])
            // Refusals change nothing.
            let refusals: [(String, Int, String)] = [
                (#"{"groupname":"g","owner":"alice","members":["bob"]}"#, 400, "/public"),
                (#"{"groupname":"g","public":true,"members":["bob"]}"#, 400, "/owner"),
                (#"{"groupname":"g","public":true,"owner":"alice","members":["ghost"]}"#, 404, "ghost"),
                (#"{"groupname":"g","public":true,"owner":"alice","maxusers":2,"members":["bob","carol"]}"#, 403, "max user size"),
                (#"{"groupname":"g","public":true,"owner":"alice","members":["alice"]}"#, 400, "/members/0"),
                (#"{"groupname":"g","public":true,"owner":"alice","maxusers":"many"}"#, 400, "/maxusers"),
            ]
            for (body, status, mention) in refusals {
                let reply = try await service.call(.post, "\(e.prefix)/chatgroups", key: e.token, body: body)
                #expect(reply.status == status && reply.json?["error_description"]?.stringValue?.contains(mention) == true, "\(body): \(reply.text)")
            }
            // Create (the earlier `desc` spelling accepted), read, page.
            let created = try await service.call(
                .post, "\(e.prefix)/chatgroups", key: e.token,
                body: #"{"groupname":"Team","desc":"the team","public":true,"maxusers":300,"owner":"alice","members":["bob","carol"]}"#)
            let group = try #require(created.json?["data"]?["groupid"]?.stringValue, "\(created.text)")
            #expect(group.count == 15 && group.allSatisfy(\.isNumber))
            let details = try await service.call(.get, "\(e.prefix)/chatgroups/\(group)", key: e.token)
            let entry = details.json?["data"]?.arrayValue?.first
            #expect(entry?["name"] == "Team" && entry?["description"] == "the team" && entry?["owner"] == "alice" && entry?["maxusers"] == 300, "\(details.text)")
            #expect(entry?["affiliations"] == [["owner": "alice"], ["member": "bob"], ["member": "carol"]] && details.json?["count"] == 1, "\(details.text)")
            let native = try await service.call(.get, "/v1/apps/groups/groups/\(group)/members", key: e.key)
            #expect(native.json?["members"] == ["alice", "bob", "carol"], "\(native.text)")
            let page = try await service.call(.get, "\(e.prefix)/chatgroups/\(group)/users?pagenum=2&pagesize=2", key: e.token)
            #expect(page.json?["data"] == [["member": "carol"]] && page.json?["count"] == 1, "\(page.text)")
            // Add one, add a batch, refusals.
            let one = try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users/dave", key: e.token)
            #expect(one.json?["data"]?["result"] == true && one.json?["data"]?["action"] == "add_member", "\(one.text)")
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users/dave", key: e.token).status == 403)
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users/ghost", key: e.token).status == 404)
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/999/users/dave", key: e.token).json?["error_description"] == "grpID 999 does not exist!")
            let batch = try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users", key: e.token, body: #"{"usernames":["dave","erin"]}"#)
            #expect(batch.json?["data"]?["newmembers"] == ["erin"], "\(batch.text)")
            let tooMany = "{\"usernames\":[" + (1...61).map { "\"u\($0)\"" }.joined(separator: ",") + "]}"
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users", key: e.token, body: tooMany).status == 400)
            // Remove one; remove a batch with per-user results; the owner stays.
            #expect(try await service.call(.delete, "\(e.prefix)/chatgroups/\(group)/users/alice", key: e.token).status == 403)
            #expect(try await service.call(.delete, "\(e.prefix)/chatgroups/\(group)/users/ghost", key: e.token).status == 403)
            let removed = try await service.call(.delete, "\(e.prefix)/chatgroups/\(group)/users/erin", key: e.token)
            #expect(removed.json?["data"]?["result"] == true && removed.json?["data"]?["action"] == "remove_member", "\(removed.text)")
            let kicked = try await service.call(.delete, "\(e.prefix)/chatgroups/\(group)/users/dave,alice,nobody", key: e.token)
            #expect(kicked.json?["data"]?.arrayValue?.map { $0["result"] } == [true, false, false], "\(kicked.text)")
            #expect(try await service.call(.get, "/v1/apps/groups/groups/\(group)/members", key: e.key).json?["members"] == ["alice", "bob", "carol"])
            // Transfer the owner.
            #expect(try await service.call(.put, "\(e.prefix)/chatgroups/\(group)", key: e.token, body: #"{"newowner":"erin"}"#).status == 403)
            #expect(try await service.call(.put, "\(e.prefix)/chatgroups/\(group)", key: e.token, body: #"{"newowner":"alice"}"#).status == 403)
            let transferred = try await service.call(.put, "\(e.prefix)/chatgroups/\(group)", key: e.token, body: #"{"newowner":"bob"}"#)
            #expect(transferred.json?["data"] == ["newowner": true], "\(transferred.text)")
            let renamed = try await service.call(.put, "\(e.prefix)/chatgroups/\(group)", key: e.token, body: #"{"groupname":"Team 2","membersonly":true}"#)
            #expect(renamed.json?["data"] == ["groupname": true, "membersonly": true], "\(renamed.text)")
            let after = try await service.call(.get, "\(e.prefix)/chatgroups/\(group)", key: e.token).json?["data"]?.arrayValue?.first
            #expect(after?["owner"] == "bob" && after?["name"] == "Team 2" && after?["membersonly"] == true, "\(String(describing: after))")
            // A group message through the native API reaches the members built over REST.
            let native2 = try await service.call(
                .post, "/v1/apps/groups/messages?dialect=easemob-legacy", key: e.key,
                body: #"{"id":"n1","target_type":"chatgroups","target":["\#(group)"],"from":"alice","msg":{"type":"txt","msg":"hi"}}"#)
            #expect(native2.json?["decisions"]?.arrayValue?.map { $0["receiver"] } == ["bob", "carol"], "\(native2.text)")
            #expect(native2.json?["decisions"]?.arrayValue?.first?["push"] == true, "\(native2.text)")
            // The block list: bob cannot be blocked while owner; carol is blocked, leaves, gets nothing, cannot come back.
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/blocks/users/bob", key: e.token).status == 403)
            let blocked = try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/blocks/users/carol", key: e.token)
            #expect(blocked.json?["data"]?["action"] == "add_blocks" && blocked.json?["data"]?["result"] == true, "\(blocked.text)")
            #expect(try await service.call(.get, "\(e.prefix)/chatgroups/\(group)/blocks/users", key: e.token).json?["data"] == ["carol"])
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users/carol", key: e.token).status == 403)
            let toGroup = try await service.call(
                .post, "\(e.prefix)/messages/chatgroups", key: e.token, body: #"{"from":"alice","to":["\#(group)"],"type":"txt","body":{"msg":"hey"}}"#)
            #expect(try await Self.decisions(service, "groups", key: e.key, toGroup).map { $0["receiver"] } == ["bob"], "\(toGroup.text)")
            #expect(try await service.call(.delete, "\(e.prefix)/chatgroups/\(group)/blocks/users/carol", key: e.token).json?["data"]?["result"] == true)
            #expect(try await service.call(.post, "\(e.prefix)/chatgroups/\(group)/users/carol", key: e.token).status == 200)
            // Delete.
            let deleted = try await service.call(.delete, "\(e.prefix)/chatgroups/\(group)", key: e.token)
            #expect(deleted.json?["data"] == ["success": true, "groupid": .string(group)], "\(deleted.text)")
            #expect(try await service.call(.get, "\(e.prefix)/chatgroups/\(group)", key: e.token).status == 404)
            #expect(try await service.call(.get, "/v1/apps/groups/groups/\(group)/members", key: e.key).json?["members"] == [])
        }
    }

    @Test("a group with maxusers above 3,000 gets no offline push: large-group", arguments: [":memory:", "sqlite"])
    func largeGroupsAreNotPushed(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "large")
            try await Self.register(service, e, ["alice"])
            for (maxusers, reason) in [(3000, nil as String?), (3001, "large-group")] {
                let created = try await service.call(
                    .post, "\(e.prefix)/chatgroups", key: e.token, body: #"{"groupname":"g","public":false,"maxusers":\#(maxusers),"owner":"alice","members":["bob"]}"#)
                let group = try #require(created.json?["data"]?["groupid"]?.stringValue, "\(created.text)")
                let sent = try await service.call(
                    .post, "\(e.prefix)/messages/chatgroups", key: e.token, body: #"{"from":"alice","to":["\#(group)"],"type":"txt","body":{"msg":"hey"}}"#)
                let decision = try await Self.decisions(service, "large", key: e.key, sent).first
                #expect(decision?["reason"] == reason.map(JSONValue.string) ?? nil && decision?["push"] == .bool(reason == nil), "\(maxusers): \(String(describing: decision))")
            }
        }
    }

    @Test("device binding: PUT / GET push/binding feed the devices bindDeviceToken makes", arguments: [":memory:", "sqlite"])
    func deviceBinding(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "bind")
            try await Self.register(service, e, ["carol"])
            let path = "\(e.prefix)/users/carol/push/binding"
            // Refusals change nothing.
            for (body, status, mention) in [
                (#"{"device_id":"d1","device_token":"\#(Self.carolToken)","notifier_name":"prod"}"#, 400, "/notifier_name"),
                (#"{"device_token":"\#(Self.carolToken)","notifier_name":"dev"}"#, 400, "/device_id"),
                (#"{"device_id":"d1","device_token":"xyz","notifier_name":"dev"}"#, 400, "/device_token"),
            ] {
                let reply = try await service.call(.put, path, key: e.token, body: body)
                #expect(reply.status == status && reply.json?["error_description"]?.stringValue?.contains(mention) == true, "\(reply.text)")
            }
            #expect(try await service.call(.put, "\(e.prefix)/users/ghost/push/binding", key: e.token, body: #"{"device_id":"d1","device_token":"","notifier_name":"dev"}"#).status == 404)
            #expect(try await service.call(.get, path, key: e.token).json?["entities"] == [])
            // Bind: the message is pushed to that token.
            let bound = try await service.call(.put, path, key: e.token, body: #"{"device_id":"d1","device_token":"\#(Self.carolToken.uppercased())","notifier_name":"dev"}"#)
            #expect(bound.json?["entities"] == [["device_id": "d1", "device_token": .string(Self.carolToken), "notifier_name": "dev"]], "\(bound.text)")
            #expect(try await service.call(.get, path, key: e.token).json?["entities"] == bound.json?["entities"])
            let native = try await service.call(.get, "/v1/apps/bind/users/carol", key: e.key)
            #expect(native.text.contains(Self.carolToken), "\(native.text)")
            let sent = try await service.call(.post, "\(e.prefix)/messages/users", key: e.token, body: #"{"from":"bob","to":["carol"],"type":"txt","body":{"msg":"hi"}}"#)
            let pushed = try await Self.decisions(service, "bind", key: e.key, sent).first
            #expect(pushed?["push"] == true && pushed?["deliveries"]?.arrayValue?.first?["device"]?["token"] == .string(Self.carolToken), "\(String(describing: pushed))")
            // bob's SDK-bound device is listed with its token as its device id, and can be unbound by it.
            let bobs = try await service.call(.get, "\(e.prefix)/users/bob/push/binding", key: e.token)
            #expect(bobs.json?["entities"] == [["device_id": .string(Self.devToken), "device_token": .string(Self.devToken), "notifier_name": "dev"]], "\(bobs.text)")
            // Unbind (empty token): no device left.
            let unbound = try await service.call(.put, path, key: e.token, body: #"{"device_id":"d1","device_token":"","notifier_name":"dev"}"#)
            #expect(unbound.status == 200 && unbound.json?["entities"] == [], "\(unbound.text)")
            let again = try await service.call(.post, "\(e.prefix)/messages/users", key: e.token, body: #"{"from":"bob","to":["carol"],"type":"txt","body":{"msg":"hi"}}"#)
            #expect(try await Self.decisions(service, "bind", key: e.key, again).first?["reason"] == "no-device")
            // Rebind, then unbind every binding of the device (empty notifier_name).
            _ = try await service.call(.put, path, key: e.token, body: #"{"device_id":"d1","device_token":"\#(Self.carolToken)","notifier_name":"dev"}"#)
            #expect(try await service.call(.put, path, key: e.token, body: #"{"device_id":"d1","device_token":"","notifier_name":""}"#).json?["entities"] == [])
            #expect(try await service.call(.get, path, key: e.token).json?["entities"] == [])
        }
    }

    @Test("push without a message: per-target answers, outbox deliveries, refusals", arguments: [":memory:", "sqlite"])
    func pushOnly(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "push")
            try await Self.register(service, e, ["carol"])
            let body = #"{"targets":["bob","carol","ghost"],"strategy":2,"pushMessage":{"title":"Sale","subTitle":"Today","content":"50% off","ext":{"k":"v"},"config":{"badge":{"setNum":3}},"apns":{"mutableContent":true}}}"#
            let single = try await service.call(.post, "\(e.prefix)/push/single", key: e.token, body: body)
            #expect(single.json?["data"] == [
                ["id": "bob", "pushStatus": "ASYNC_SUCCESS", "desc": "success"], ["id": "carol", "pushStatus": "FAIL", "desc": "no push binding"],
                ["id": "ghost", "pushStatus": "FAIL", "desc": "appUser not exists"],
            ], "\(single.text)")
            let decision = try #require(try await Self.decisions(service, "push", key: e.key, single).first)
            let payload = decision["payload"]
            #expect(payload?["aps"]?["alert"]?["title"] == "Sale" && payload?["aps"]?["alert"]?["subtitle"] == "Today" && payload?["aps"]?["alert"]?["body"] == "50% off", "\(decision)")
            #expect(payload?["aps"]?["badge"] == 3 && payload?["aps"]?["mutable-content"] == 1 && payload?["e"]?["k"] == "v" && payload?["f"] == "admin", "\(decision)")
            let sync = try await service.call(.post, "\(e.prefix)/push/sync/bob", key: e.token, body: #"{"pushMessage":{"content":"ping"}}"#)
            #expect(sync.json?["data"]?.arrayValue?.first?["pushStatus"] == "SUCCESS" && sync.json?["data"]?.arrayValue?.first?["desc"] == "success", "\(sync.text)")
            for (path, bodyText, status) in [
                ("/push/single", #"{"targets":["bob"],"strategy":4,"pushMessage":{"content":"x"}}"#, 400),
                ("/push/single", #"{"targets":["bob"],"pushMessage":{"content":"\#(String(repeating: "x", count: 101))"}}"#, 400),
                ("/push/single", #"{"targets":["bob"],"pushMessage":{"title":"t"}}"#, 400),
                ("/push/list/label", #"{"targets":["vip"],"pushMessage":{"content":"x"}}"#, 400),
                ("/push/task", #"{"pushMessage":{"content":"x"},"strategy":4}"#, 400),
            ] {
                let reply = try await service.call(.post, e.prefix + path, key: e.token, body: bodyText)
                #expect(reply.status == status && reply.headers[.init("PushBridge-Messages")!] == nil, "\(path) \(bodyText): \(reply.text)")
            }
        }
    }

    @Test("cmd messages are stored and never pushed: reason command", arguments: [":memory:", "sqlite"])
    func commandMessages(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let e = try await VendorRoutesTests().easemobApp(service, "cmd")
            let sent = try await service.call(.post, "\(e.prefix)/messages/users", key: e.token, body: #"{"from":"alice","to":["bob"],"type":"cmd","body":{"action":"refresh"}}"#)
            #expect(sent.status == 200 && sent.json?["data"]?["bob"]?.stringValue?.isEmpty == false, "\(sent.text)")
            #expect(try await Self.decisions(service, "cmd", key: e.key, sent).first?["reason"] == "command")
            let bad = try await service.call(.post, "\(e.prefix)/messages/users", key: e.token, body: #"{"from":"alice","to":["bob"],"type":"cmd","body":{"msg":"x"}}"#)
            #expect(bad.status == 400, "\(bad.text)")
        }
    }
}
