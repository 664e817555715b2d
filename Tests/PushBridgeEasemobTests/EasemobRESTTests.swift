import PushBridgeCore
import PushBridgeEasemob
import PushBridgeJSON
import Testing

/// Easemob / Agora Chat REST bodies on their own, as dialect calls and messages.
@Suite("Easemob REST bodies")
struct EasemobRESTTests {
    @Test("legacy hours: start == end is all day, an end of 0 is midnight, strings and numbers both")
    func legacyHours() throws {
        func window(_ body: String) throws -> JSONValue? {
            try EasemobREST.userCalls(try JSONParser.parse(body)).first { $0["call"] == "disableOfflinePushStart" }
        }
        #expect(try window(#"{"notification_no_disturbing":true,"notification_no_disturbing_start":"8","notification_no_disturbing_end":"8"}"#)
            == ["call": "disableOfflinePushStart", "start": 0, "end": 24])
        #expect(try window(#"{"notification_no_disturbing_start":22,"notification_no_disturbing_end":0}"#)
            == ["call": "disableOfflinePushStart", "start": 22, "end": 24])
        #expect(try window(#"{"notification_no_disturbing":1,"notification_no_disturbing_start":"10","notification_no_disturbing_end":"8"}"#)
            == ["call": "disableOfflinePushStart", "start": 10, "end": 8])
        #expect(try EasemobREST.userCalls(try JSONParser.parse(#"{"notification_no_disturbing":false}"#)).first == ["call": "enableOfflinePush"])
    }

    @Test("bad legacy fields name their pointer", arguments: [
        (#"{"notification_no_disturbing_start":"24","notification_no_disturbing_end":"8"}"#, "/notification_no_disturbing_start"),
        (#"{"notification_no_disturbing_start":8}"#, "/notification_no_disturbing_end"),
        (#"{"notification_display_style":2}"#, "/notification_display_style"),
        (#"{"notification_no_disturbing":"yes"}"#, "/notification_no_disturbing"),
        (#"{"nickname":7}"#, "/nickname"),
        (#"{"nick":"x"}"#, "/nick"),
        (#"{}"#, "/"),
    ])
    func badLegacyFields(_ body: String, _ pointer: String) throws {
        let error = try #require(throws: InputError.self) { try EasemobREST.userCalls(try JSONParser.parse(body)) }
        #expect(error.pointer.description == pointer)
    }

    @Test func notificationSettings() throws {
        let app = try EasemobREST.notificationCalls(
            try JSONParser.parse(#"{"type":"AT","ignoreInterval":"21:30-08:00","ignoreDuration":90001}"#), target: .app)
        #expect(app.first == ["call": "setSilentModeForAll", "remindType": "MentionOnly", "silentModeDuration": 2, "silentModeStartTime": "21:30", "silentModeEndTime": "8:00"])
        let allDay = try EasemobREST.notificationCalls(try JSONParser.parse(#"{"ignoreInterval":"00:00-00:00"}"#), target: .app)
        #expect(allDay.first?["silentModeEndTime"] == "24:00")
        let off = try EasemobREST.notificationCalls(try JSONParser.parse(#"{"ignoreInterval":""}"#), target: .app)
        #expect(off.first?["silentModeStartTime"] == "0:00" && off.first?["silentModeEndTime"] == "0:00")
        let conversation = try EasemobREST.notificationCalls(
            try JSONParser.parse(#"{"type":"DEFAULT","ignoreInterval":"08:00-09:00"}"#), target: .conversation(ConversationKey(.group, "g1")))
        #expect(conversation.map { $0["call"] } == ["clearRemindTypeForConversation", "getSilentModeForConversation"])
        for (body, pointer) in [
            (#"{"ignoreDuration":604800001}"#, "/ignoreDuration"), (#"{"ignoreDuration":-1}"#, "/ignoreDuration"), (#"{"ignoreDuration":"60000"}"#, "/ignoreDuration"),
            (#"{"ignoreInterval":"24:00-08:00"}"#, "/ignoreInterval"), (#"{"ignoreInterval":"8:00-9:00"}"#, "/ignoreInterval"), (#"{"type":"DEFAULT"}"#, "/type"),
            (#"{"type":"SOME"}"#, "/type"), (#"{"interval":"x"}"#, "/interval"),
        ] {
            let error = try #require(throws: InputError.self) { try EasemobREST.notificationCalls(try JSONParser.parse(body), target: .app) }
            #expect(error.pointer.description == pointer, "\(body)")
        }
        let data = EasemobREST.notificationData(
            ["remindType": "None", "expireTimestamp": 1_647_590_149_924, "silentModeStartTime": "21:30", "silentModeEndTime": "8:00"], target: .app)
        #expect(data == ["type": "NONE", "ignoreInterval": "21:30-08:00", "ignoreDuration": 1_647_590_149_924])
    }

    @Test func sendBodies() throws {
        var n = 0
        let ids = { () -> String in
            n += 1
            return "m\(n)"
        }
        let legacy = try EasemobREST.legacyMessages(
            try JSONParser.parse(#"{"target_type":"chatgroups","target":["g1","g2"],"msg":{"type":"txt","msg":"hi"}}"#), newID: ids)
        #expect(legacy.map(\.id) == ["m1", "m2"] && legacy.map(\.targets) == [["g1"], ["g2"]] && legacy.allSatisfy { $0.sender == "admin" })
        let current = try EasemobREST.messages(try JSONParser.parse(#"{"from":"u1","to":["u2","u3"],"type":"img","body":{"url":"x"}}"#), kind: .oneToOne, newID: ids)
        #expect(current.count == 2 && current[0].message["body"] == ["type": "image"] && current[1].message["to"] == "u3")
        let tooMany = "{\"target_type\":\"users\",\"target\":[" + (0...600).map { "\"u\($0)\"" }.joined(separator: ",") + "],\"msg\":{\"type\":\"txt\",\"msg\":\"x\"}}"
        let error = try #require(throws: InputError.self) { try EasemobREST.legacyMessages(try JSONParser.parse(tooMany), newID: ids) }
        #expect(error.pointer.description == "/target" && error.found == "601 ids")
    }
}
