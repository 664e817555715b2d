import Foundation
import PushBridgeJSON
import PushBridgeServer
import PushBridgeServiceTestSupport
import PushBridgeStoreTestSupport
import PushBridgeTestSupport
import PushBridgeVendorRESTTestSupport
import Testing

/// Tencent Cloud IM's pushes to many users over REST: tags (`im_add_tag` …), `im_push` and
/// `timpush/push` as push tasks to every user or to tags, `timpush/batch` to listed accounts; refusals
/// with Tencent's codes change nothing; on both stores.
@Suite("Tencent push REST")
struct TencentCampaignRoutesTests {
    static func post(_ service: LiveService, _ t: VendorRoutesTests.TencentApp, _ command: String, _ body: String) async throws -> Reply {
        try await service.call(.post, "/v4/\(command)?" + t.query(), body: body)
    }

    static func expectOK(_ reply: Reply, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 200 && reply.json?["ActionStatus"] == "OK" && reply.json?["ErrorCode"] == 0, "\(what): \(reply.text)", sourceLocation: sourceLocation)
    }

    @Test("tags: added, read, removed; refusals with Tencent's codes change nothing", arguments: [":memory:", "sqlite"])
    func tags(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router) { service in
            let t = try await VendorRoutesTests().tencentApp(service, "ttags")
            Self.expectOK(try await Self.post(service, t, "im_open_login_svc/multiaccount_import", #"{"Accounts":["dave"]}"#), "import")
            Self.expectOK(
                try await Self.post(service, t, "all_member_push/im_add_tag", #"{"UserTags":[{"To_Account":"bob","Tags":["vip","男"]},{"To_Account":"carol","Tags":["vip"]}]}"#),
                "add")
            let tooLong = String(repeating: "t", count: 51)
            let elevenTags = (0...10).map { "\"t\($0)\"" }.joined(separator: ",")
            for (command, body, code) in [
                ("im_add_tag", #"{"UserTags":[{"To_Account":"bob","Tags":["new"]},{"To_Account":"ghost","Tags":["new"]}]}"#, 70107),
                ("im_add_tag", #"{"UserTags":[{"To_Account":"bob","Tags":[\#(elevenTags)]}]}"#, 90032),
                ("im_add_tag", #"{"UserTags":[{"To_Account":"bob","Tags":["\#(tooLong)"]}]}"#, 90020),
                ("im_add_tag", #"{"UserTags":[{"To_Account":"bob","Tags":[""]}]}"#, 90040),
                ("im_add_tag", #"{"UserTags":[{"To_Account":"bob","Tags":["a","a"]}]}"#, 90022),
                ("im_add_tag", #"{"UserTags":[]}"#, 90001),
                ("im_add_tag", #"{"UserTags":[{"To_Account":"bob"}]}"#, 90001),
                ("im_get_tag", #"{"To_Account":["bob","ghost"]}"#, 70107),
                ("im_remove_tag", #"{"UserTags":[{"To_Account":"ghost","Tags":["vip"]}]}"#, 70107),
                ("im_remove_all_tags", #"{"To_Account":[]}"#, 90001),
            ] {
                let reply = try await Self.post(service, t, "all_member_push/\(command)", body)
                #expect(reply.json?["ActionStatus"] == "FAIL" && reply.json?["ErrorCode"] == .int(Int64(code)), "\(command) \(body): \(reply.text)")
            }
            let read = try await Self.post(service, t, "all_member_push/im_get_tag", #"{"To_Account":["bob","carol","dave"]}"#)
            #expect(
                read.json?["UserTags"] == [["To_Account": "bob", "Tags": ["vip", "男"]], ["To_Account": "carol", "Tags": ["vip"]], ["To_Account": "dave", "Tags": []]],
                "\(read.text)")
            Self.expectOK(try await Self.post(service, t, "all_member_push/im_remove_tag", #"{"UserTags":[{"To_Account":"bob","Tags":["vip","other"]}]}"#), "remove")
            Self.expectOK(try await Self.post(service, t, "all_member_push/im_remove_all_tags", #"{"To_Account":["carol"]}"#), "remove all")
            let after = try await Self.post(service, t, "all_member_push/im_get_tag", #"{"To_Account":["bob","carol"]}"#)
            #expect(after.json?["UserTags"] == [["To_Account": "bob", "Tags": ["男"]], ["To_Account": "carol", "Tags": []]], "\(after.text)")
        }
    }

    @Test("im_push and timpush/push run as tasks to tags or everyone; timpush/batch pushes listed accounts at once", arguments: [":memory:", "sqlite"])
    func pushes(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router, { $0.pushTaskPageSize = 2 }) { service in
            let t = try await VendorRoutesTests().tencentApp(service, "tpush")
            Self.expectOK(try await Self.post(service, t, "im_open_login_svc/multiaccount_import", #"{"Accounts":["dave","erin"]}"#), "import")
            Self.expectOK(
                try await Self.post(
                    service, t, "all_member_push/im_add_tag",
                    #"{"UserTags":[{"To_Account":"bob","Tags":["vip","ios"]},{"To_Account":"carol","Tags":["ios"]},{"To_Account":"dave","Tags":["vip"]}]}"#), "tags")
            let text = #""MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"Sale today"}}]"#
            // Refusals change nothing: no task is made.
            for (body, code) in [
                (#"{"MsgRandom":1,\#(text),"Condition":{"AttrsAnd":{"sex":"1"}}}"#, 90033),
                (#"{"MsgRandom":1,\#(text),"Condition":{"TagsOr":["vip"],"AttrsOr":{"sex":"1"}}}"#, 90039),
                (#"{"MsgRandom":1,\#(text),"Condition":{"TagsAnd":["vip"],"TagsOr":["vip"]}}"#, 90022),
                (#"{"MsgRandom":1,\#(text),"Condition":{"TagsOr":[]}}"#, 90001),
                (#"{"MsgRandom":1,\#(text),"MsgLifeTime":604801}"#, 90026),
                (#"{\#(text)}"#, 90005),
                (#"{"MsgRandom":1}"#, 90002),
                (#"{"MsgRandom":1,\#(text),"To_Account":"bob"}"#, 90001),
            ] {
                let reply = try await Self.post(service, t, "all_member_push/im_push", body)
                #expect(reply.json?["ActionStatus"] == "FAIL" && reply.json?["ErrorCode"] == .int(Int64(code)), "\(body): \(reply.text)")
            }
            #expect(try await service.call(.get, "/v1/apps/tpush/push-tasks", key: t.key).json?["tasks"] == [])

            // To the users with vip or ios (bob, carol, dave): bob and carol have devices.
            let sentAt = ContinuousClock.now
            let tagged = try await Self.post(
                service, t, "all_member_push/im_push",
                #"{"MsgRandom":7,\#(text),"Condition":{"TagsOr":["vip","ios"]},"OfflinePushInfo":{"Title":"Shop","Desc":"50% off"}}"#)
            Self.expectOK(tagged, "im_push")
            let taskID = try #require(tagged.json?["TaskId"]?.stringValue.flatMap { Int64($0) }, "\(tagged.text)")
            // The same MsgRandom within the second is the same task: judged when both requests, from the
            // first's sending to the second's answer, took less than a second (a loaded machine may pause longer).
            let again = try await Self.post(service, t, "all_member_push/im_push", #"{"MsgRandom":7,\#(text),"Condition":{"TagsOr":["vip","ios"]}}"#)
            if ContinuousClock.now - sentAt < .milliseconds(950) { #expect(again.json?["TaskId"] == tagged.json?["TaskId"], "\(again.text)") }
            let done = try await EasemobTaskRoutesTests.ended(service, "tpush", key: t.key, taskID)
            #expect(done["family"] == "tencent" && done["anyLabels"] == ["vip", "ios"] && done["labels"] == [], "\(done)")
            #expect(done["targets"] == 3 && done["pushed"] == 2 && done["suppressed"] == ["no-device": 1], "\(done)")
            let bob = try await service.call(.get, "/v1/apps/tpush/messages/pushtask-\(taskID)-bob", key: t.key)
            let decision = try #require(bob.json?["decisions"]?.arrayValue?.first, "\(bob.text)")
            #expect(decision["receiver"] == "bob" && decision["push"] == true, "\(bob.text)")
            #expect(decision["payload"]?["aps"]?["alert"]?["title"] == "Shop" && decision["payload"]?["aps"]?["alert"]?["body"] == "50% off", "\(bob.text)")
            #expect(try await service.call(.get, "/v1/apps/tpush/messages/pushtask-\(taskID)-erin", key: t.key).status == 404)

            // timpush/push with TagsAnd, no MsgBody: its OfflinePushInfo is the push.
            let both = try await Self.post(
                service, t, "timpush/push", #"{"From_Account":"admin","MsgRandom":9,"Condition":{"TagsAnd":["vip","ios"]},"OfflinePushInfo":{"Desc":"Only bob"}}"#)
            Self.expectOK(both, "timpush/push")
            let bothID = try #require(both.json?["TaskId"]?.stringValue.flatMap { Int64($0) }, "\(both.text)")
            let bothDone = try await EasemobTaskRoutesTests.ended(service, "tpush", key: t.key, bothID)
            #expect(bothDone["labels"] == ["vip", "ios"] && bothDone["targets"] == 1 && bothDone["pushed"] == 1, "\(bothDone)")
            let onlyBob = try await service.call(.get, "/v1/apps/tpush/messages/pushtask-\(bothID)-bob", key: t.key)
            #expect(onlyBob.json?["decisions"]?.arrayValue?.first?["payload"]?["aps"]?["alert"] == "Only bob", "\(onlyBob.text)")

            // timpush/batch: pushed at once; an unknown account is listed, the others pushed.
            let batch = try await Self.post(
                service, t, "timpush/batch", #"{"From_Account":"admin","To_Account":["bob","ghost","carol"],"MsgRandom":3,"OfflinePushInfo":{"Title":"Hi","Desc":"Batch"}}"#)
            Self.expectOK(batch, "batch")
            #expect(batch.json?["TaskId"]?.stringValue?.hasPrefix("batch_") == true, "\(batch.text)")
            #expect(batch.json?["ErrorList"] == [["To_Account": "ghost", "ErrorCode": 70107, "ErrorInfo": "the account does not exist"]], "\(batch.text)")
            let sent = try await EasemobGroupRoutesTests.decisions(service, t.app, key: t.key, batch)
            #expect(sent.compactMap { $0["receiver"]?.stringValue }.sorted() == ["bob", "carol"], "\(sent)")
            #expect(sent.allSatisfy { $0["payload"]?["aps"]?["alert"]?["body"] == "Batch" }, "\(sent)")
            for (body, code) in [
                (#"{"To_Account":["bob"],"MsgRandom":3,"OfflinePushInfo":{"Desc":"x"}}"#, 90001),
                (#"{"From_Account":"admin","To_Account":["bob"],"MsgRandom":3}"#, 90001),
                (#"{"From_Account":"admin","To_Account":["bob"],"MsgRandom":3,"OfflinePushInfo":{"Desc":"x"},"DataId":"\#(String(repeating: "d", count: 65))"}"#, 90057),
                (#"{"From_Account":"admin","To_Account":[],"MsgRandom":3,"OfflinePushInfo":{"Desc":"x"}}"#, 90010),
            ] {
                let reply = try await Self.post(service, t, "timpush/batch", body)
                #expect(reply.json?["ActionStatus"] == "FAIL" && reply.json?["ErrorCode"] == .int(Int64(code)), "\(body): \(reply.text)")
            }
        }
    }

    @Test("attributes: names, values, a push to AttrsAnd / AttrsOr; refusals with Tencent's codes change nothing", arguments: [":memory:", "sqlite"])
    func attributes(_ store: String) async throws {
        try await withLiveService(database: store == ":memory:" ? ":memory:" : nil, mode: .router, { $0.pushTaskPageSize = 2 }) { service in
            let t = try await VendorRoutesTests().tencentApp(service, "tattrs")
            Self.expectOK(try await Self.post(service, t, "im_open_login_svc/multiaccount_import", #"{"Accounts":["dave"]}"#), "import")
            Self.expectOK(try await Self.post(service, t, "all_member_push/im_set_attr_name", #"{"AttrNames":{"0":"sex","1":"city"}}"#), "names")
            Self.expectOK(
                try await Self.post(
                    service, t, "all_member_push/im_set_attr",
                    #"{"UserAttrs":[{"To_Account":"bob","Attrs":{"sex":"1","city":"sz"}},{"To_Account":"carol","Attrs":{"sex":"2","city":"sz"}},{"To_Account":"dave","Attrs":{"sex":"1"}}]}"#),
                "set")
            for (command, body, code) in [
                ("im_set_attr_name", #"{"AttrNames":{"0":"gender"}}"#, 90033),
                ("im_set_attr_name", #"{"AttrNames":{"10":"x"}}"#, 90001),
                ("im_set_attr", #"{"UserAttrs":[{"To_Account":"bob","Attrs":{"age":"3"}}]}"#, 90033),
                ("im_set_attr", #"{"UserAttrs":[{"To_Account":"ghost","Attrs":{"sex":"1"}}]}"#, 70107),
                ("im_remove_attr", #"{"UserAttrs":[{"To_Account":"bob","Attrs":["age"]}]}"#, 90033),
                ("im_get_attr", #"{"To_Account":["ghost"]}"#, 70107),
                ("im_get_attr_name", #"{"x":1}"#, 90001),
                ("im_push", #"{"MsgRandom":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}],"Condition":{"AttrsAnd":{"age":"3"}}}"#, 90033),
            ] {
                let reply = try await Self.post(service, t, "all_member_push/\(command)", body)
                #expect(reply.json?["ActionStatus"] == "FAIL" && reply.json?["ErrorCode"] == .int(Int64(code)), "\(command) \(body): \(reply.text)")
            }
            let names = try await Self.post(service, t, "all_member_push/im_get_attr_name", "{}")
            #expect(names.json?["AttrNames"] == ["0": "sex", "1": "city"], "\(names.text)")
            let read = try await Self.post(service, t, "all_member_push/im_get_attr", #"{"To_Account":["bob","dave"]}"#)
            #expect(read.json?["UserAttrs"] == [["To_Account": "bob", "Attrs": ["city": "sz", "sex": "1"]], ["To_Account": "dave", "Attrs": ["sex": "1"]]], "\(read.text)")

            // sex 1 and city sz: bob only (dave has no city).
            let pushed = try await Self.post(
                service, t, "all_member_push/im_push",
                #"{"MsgRandom":5,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"For you"}}],"Condition":{"AttrsAnd":{"sex":"1","city":"sz"}}}"#)
            Self.expectOK(pushed, "im_push")
            let id = try #require(pushed.json?["TaskId"]?.stringValue.flatMap { Int64($0) }, "\(pushed.text)")
            let done = try await EasemobTaskRoutesTests.ended(service, "tattrs", key: t.key, id)
            #expect(done["targets"] == 1 && done["pushed"] == 1, "\(done)")
            #expect(try await service.call(.get, "/v1/apps/tattrs/messages/pushtask-\(id)-bob", key: t.key).status == 200)
            // sex 2 or city sz: bob and carol; dave (sex 1, no city) is not one.
            let either = try await Self.post(
                service, t, "all_member_push/im_push",
                #"{"MsgRandom":6,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"Either"}}],"Condition":{"AttrsOr":{"sex":"2","city":"sz"}}}"#)
            let eitherID = try #require(either.json?["TaskId"]?.stringValue.flatMap { Int64($0) }, "\(either.text)")
            let eitherDone = try await EasemobTaskRoutesTests.ended(service, "tattrs", key: t.key, eitherID)
            #expect(eitherDone["targets"] == 2 && eitherDone["pushed"] == 2, "\(eitherDone)")
            Self.expectOK(try await Self.post(service, t, "all_member_push/im_remove_attr", #"{"UserAttrs":[{"To_Account":"bob","Attrs":["city"]}]}"#), "remove")
            let after = try await Self.post(service, t, "all_member_push/im_get_attr", #"{"To_Account":["bob"]}"#)
            #expect(after.json?["UserAttrs"] == [["To_Account": "bob", "Attrs": ["sex": "1"]]], "\(after.text)")
        }
    }
}
