import Foundation
import PushBridgeJSON
import PushBridgeServer
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// Tencent Cloud IM groups over REST (Specification §14): group commands with Tencent's
/// per-member results and codes, `MsgFlag` as the canonical remind type, targeted messages, `MsgSeq`.
@Suite("Tencent group REST")
struct TencentGroupRoutesTests {
    static func post(_ service: LiveService, _ t: VendorRoutesTests.TencentApp, _ command: String, _ body: String) async throws -> Reply {
        try await service.call(.post, "/v4/group_open_http_svc/\(command)?" + t.query(), body: body)
    }

    static func send(_ service: LiveService, _ t: VendorRoutesTests.TencentApp, group: String, random: Int, extra: String = "") async throws -> (Reply, [JSONValue]) {
        let reply = try await post(
            service, t, "send_group_msg",
            #"{"GroupId":"\#(group)","From_Account":"alice","Random":\#(random),"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"g"}}]\#(extra)}"#)
        guard reply.headers[.init("PushBridge-Messages")!] != nil else { return (reply, []) }  // refused: nothing sent
        return (reply, try await EasemobGroupRoutesTests.decisions(service, t.app, key: t.key, reply))
    }

    @Test("create, list, change flags and cards, target, add, delete, destroy", arguments: [":memory:", "sqlite"])
    func groupCommands(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let t = try await VendorRoutesTests().tencentApp(service, "tgroups")
            let imported = try await service.call(.post, "/v4/im_open_login_svc/multiaccount_import?" + t.query(), body: #"{"Accounts":["alice","erin"]}"#)
            #expect(imported.json?["ActionStatus"] == "OK", "\(imported.text)")
            // Refusals, with Tencent's codes, store nothing.
            for (body, code) in [
                (#"{"Type":"Public","Name":"g","Owner_Account":"alice","MemberList":[{"Member_Account":"ghost"}]}"#, 10019),
                (#"{"Type":"Lobby","Name":"g"}"#, 10004),
                (#"{"Type":"AVChatRoom","Name":"g","MemberList":[{"Member_Account":"bob"}]}"#, 10007),
                (#"{"Type":"Public","Name":"\#(String(repeating: "n", count: 31))"}"#, 10004),
                (#"{"Type":"Public","Name":"g","GroupId":"team","MemberList":[{"Member_Account":"bob","Role":"Boss"}]}"#, 10004),
                (#"{"Type":"Public""#, 10011),
            ] {
                let reply = try await Self.post(service, t, "create_group", body)
                #expect(reply.status == 200 && reply.json?["ActionStatus"] == "FAIL" && reply.json?["ErrorCode"] == .int(Int64(code)), "\(body): \(reply.text)")
            }
            #expect(try await Self.send(service, t, group: "team", random: 1).0.json?["ErrorCode"] == 10010)
            // Create with a custom id, and with a generated one.
            let created = try await Self.post(
                service, t, "create_group",
                #"{"Type":"Public","Name":"Team","GroupId":"team","Owner_Account":"alice","MemberList":[{"Member_Account":"bob"},{"Member_Account":"carol","Role":"Admin"}]}"#)
            #expect(created.json?["ActionStatus"] == "OK" && created.json?["GroupId"] == "team", "\(created.text)")
            #expect(try await Self.post(service, t, "create_group", #"{"Type":"Public","Name":"Again","GroupId":"team"}"#).json?["ErrorCode"] == 10021)
            let generated = try await Self.post(service, t, "create_group", #"{"Type":"Work","Name":"Other","Owner_Account":"alice","MemberList":[{"Member_Account":"bob"}]}"#)
            let other = try #require(generated.json?["GroupId"]?.stringValue, "\(generated.text)")
            #expect(other.hasPrefix("@TGS#") && other.count == 14)
            #expect(try await service.call(.get, "/v1/apps/tgroups/groups/team/members", key: t.key).json?["members"] == ["alice", "bob", "carol"])
            // Member info.
            let info = try await Self.post(service, t, "get_group_member_info", #"{"GroupId":"team"}"#)
            #expect(info.json?["MemberNum"] == 3, "\(info.text)")
            #expect(info.json?["MemberList"]?.arrayValue?.map { $0["Role"] } == ["Owner", "Member", "Admin"], "\(info.text)")
            #expect(info.json?["MemberList"]?.arrayValue?.allSatisfy { $0["MsgFlag"] == "AcceptAndNotify" } == true)
            let paged = try await Self.post(service, t, "get_group_member_info", #"{"GroupId":"team","Limit":1,"Offset":1}"#)
            #expect(paged.json?["MemberList"]?.arrayValue?.map { $0["Member_Account"] } == ["bob"] && paged.json?["MemberNum"] == 3, "\(paged.text)")
            // MsgSeq per group, from 1; a retried request (same Random) keeps its number.
            let (first, pushed) = try await Self.send(service, t, group: "team", random: 10)
            #expect(first.json?["MsgSeq"] == 1 && pushed.map { $0["push"] } == [true, true], "\(first.text) \(pushed)")
            #expect(try await Self.send(service, t, group: "team", random: 11).0.json?["MsgSeq"] == 2)
            #expect(try await Self.send(service, t, group: "team", random: 11).0.json?["MsgSeq"] == 2)
            #expect(try await Self.send(service, t, group: other, random: 12).0.json?["MsgSeq"] == 1)
            // MsgFlag on bob; carol is silenced through the Agora silent-mode call it maps to: the same decisions.
            for (round, (flag, agora, reason)) in ([
                ("AcceptNotNotify", "None", "muted"), ("AcceptNotNotifyExceptAt", "MentionOnly", "not-mentioned"), ("Discard", "None", "muted"),
                ("AcceptAndNotify", nil, nil),
            ] as [(String, String?, String?)]).enumerated() {
                let changed = try await Self.post(service, t, "modify_group_member_info", #"{"GroupId":"team","Member_Account":"bob","MsgFlag":"\#(flag)"}"#)
                #expect(changed.json?["ActionStatus"] == "OK", "\(changed.text)")
                let call = agora.map { #"[{"call":"setSilentModeForConversation","conversationId":"team","conversationType":"GroupChat","remindType":"\#($0)"}]"# }
                    ?? #"[{"call":"clearRemindTypeForConversation","conversationId":"team","conversationType":"GroupChat"}]"#
                let native = try await service.call(.post, "/v1/apps/tgroups/users/carol/calls?dialect=agora-silent", key: t.key, body: call)
                #expect(native.status == 200, "\(native.text)")
                let (_, decisions) = try await Self.send(service, t, group: "team", random: 100 + round)
                #expect(decisions.map { $0["reason"] } == [reason.map(JSONValue.string) ?? nil, reason.map(JSONValue.string) ?? nil], "\(flag): \(decisions)")
                let read = try await Self.post(service, t, "get_group_member_info", #"{"GroupId":"team","MemberRoleFilter":["Member"]}"#)
                #expect(read.json?["MemberList"]?.arrayValue?.first?["MsgFlag"] == .string(flag), "\(read.text)")
            }
            // NameCard, roles; refusals.
            #expect(try await Self.post(service, t, "modify_group_member_info", #"{"GroupId":"team","Member_Account":"alice","NameCard":"Boss"}"#).json?["ActionStatus"] == "OK")
            #expect(try await Self.post(service, t, "modify_group_member_info", #"{"GroupId":"team","Member_Account":"bob","Role":"Admin"}"#).json?["ActionStatus"] == "OK")
            let cards = try await Self.post(service, t, "get_group_member_info", #"{"GroupId":"team"}"#)
            #expect(cards.json?["MemberList"]?.arrayValue?.first?["NameCard"] == "Boss" && cards.json?["MemberList"]?.arrayValue?[1]["Role"] == "Admin", "\(cards.text)")
            for (body, code) in [
                (#"{"GroupId":"team","Member_Account":"erin","MsgFlag":"Discard"}"#, 10007), (#"{"GroupId":"team","Member_Account":"bob","MsgFlag":"Loud"}"#, 10004),
                (#"{"GroupId":"nope","Member_Account":"bob","MsgFlag":"Discard"}"#, 10010), (#"{"GroupId":"team","Member_Account":"bob"}"#, 10004),
            ] {
                #expect(try await Self.post(service, t, "modify_group_member_info", body).json?["ErrorCode"] == .int(Int64(code)), "\(body)")
            }
            // A targeted message: only carol decides, and her counter does not move.
            let badge = try await service.call(.get, "/v1/apps/tgroups/users/carol", key: t.key).json?["badge"]
            let (targeted, only) = try await Self.send(service, t, group: "team", random: 200, extra: #","To_Account":["carol"]"#)
            #expect(targeted.json?["ActionStatus"] == "OK" && only.map { $0["receiver"] } == ["carol"] && only.first?["push"] == true, "\(targeted.text) \(only)")
            #expect(only.first?["payload"]?["aps"]?["badge"] == nil, "\(only)")
            #expect(try await service.call(.get, "/v1/apps/tgroups/users/carol", key: t.key).json?["badge"] == badge)
            #expect(try await Self.send(service, t, group: "team", random: 201, extra: #","To_Account":[]"#).0.json?["ErrorCode"] == 10004)
            // Add: per-member results (0 no such account, 1 added, 2 already a member).
            let added = try await Self.post(service, t, "add_group_member", #"{"GroupId":"team","MemberList":[{"Member_Account":"dave"},{"Member_Account":"bob"},{"Member_Account":"erin"}]}"#)
            #expect(added.json?["MemberList"]?.arrayValue?.map { $0["Result"] } == [0, 2, 1], "\(added.text)")
            // Delete: a non-member is no error; the owner cannot go.
            #expect(try await Self.post(service, t, "delete_group_member", #"{"GroupId":"team","MemberToDel_Account":["erin","nobody"]}"#).json?["ActionStatus"] == "OK")
            #expect(try await Self.post(service, t, "delete_group_member", #"{"GroupId":"team","MemberToDel_Account":["alice"]}"#).json?["ErrorCode"] == 10004)
            #expect(try await service.call(.get, "/v1/apps/tgroups/groups/team/members", key: t.key).json?["members"] == ["alice", "bob", "carol"])
            // Destroy: the group is gone, and a new one of the same id numbers from 1 again.
            #expect(try await Self.post(service, t, "destroy_group", #"{"GroupId":"team"}"#).json?["ActionStatus"] == "OK")
            #expect(try await Self.post(service, t, "destroy_group", #"{"GroupId":"team"}"#).json?["ErrorCode"] == 10010)
            #expect(try await Self.send(service, t, group: "team", random: 300).0.json?["ErrorCode"] == 10010)
            _ = try await Self.post(service, t, "create_group", #"{"Type":"Public","Name":"Team","GroupId":"team","Owner_Account":"alice","MemberList":[{"Member_Account":"bob"}]}"#)
            #expect(try await Self.send(service, t, group: "team", random: 301).0.json?["MsgSeq"] == 1)
        }
    }
}
