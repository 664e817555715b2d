import PushBridgeJSON
import PushBridgeTencent
import Testing

/// Tencent Cloud IM REST bodies on their own, as messages, and the vendor's codes for what they refuse.
@Suite("Tencent REST bodies")
struct TencentRESTTests {
    @Test func tencentBodies() throws {
        let body = try JSONParser.parse(
            #"{"To_Account":"bob","MsgRandom":5,"MsgBody":[{"MsgType":"TIMCustomElem","MsgContent":{"Data":"d","Desc":"custom","Ext":"e","Sound":"s.caf"}}]}"#)
        let messages = try TencentREST.messages(body, command: .sendMessage, administrator: "admin")
        #expect(messages[0].sender == "admin" && messages[0].id == "c2c-admin-bob-5")
        // A single custom element's Ext and Sound stand in for OfflinePushInfo, which would replace them.
        #expect(messages[0].message["offlinePushInfo"] == ["ext": "e", "iosConfig": ["sound": "s.caf"]])
        func code(_ text: String, _ command: TencentREST.Command = .sendMessage) -> Int? {
            do {
                _ = try TencentREST.messages(try JSONParser.parse(text), command: command, administrator: "admin")
                return nil
            } catch { return (error as? TencentREST.Failure)?.code }
        }
        #expect(code(#"{"To_Account":"bob","MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#) == 90005)
        #expect(code(#"{"To_Account":"bob","MsgRandom":1,"MsgBody":[]}"#) == 90002)
        #expect(code(#"{"To_Account":"bob","MsgRandom":1,"MsgBody":[{"MsgType":"TIMBogusElem","MsgContent":{}}]}"#) == 90002)
        #expect(code(#"{"To_Account":"bob","MsgRandom":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}],"Bogus":1}"#) == 90010)
        #expect(code(#"{"To_Account":"bob","MsgRandom":1,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}],"OfflinePushInfo":{"ApnsInfo":{"BadgeMode":2}}}"#) == 90010)
        let batch = "{\"To_Account\":[" + (0...500).map { "\"u\($0)\"" }.joined(separator: ",") + "],\"MsgRandom\":1,\"MsgBody\":[{\"MsgType\":\"TIMTextElem\",\"MsgContent\":{\"Text\":\"x\"}}]}"
        #expect(code(batch, .batchSendMessage) == 90011)
        #expect(code(#"{"GroupId":"g","MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#, .sendGroupMessage) == 10004)
    }
}
