import Foundation
import PushBridgeCore
import PushBridgeJSON
import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeVendorRESTTestSupport
import Testing

/// The vendor REST translation on its own: UserSig v2 against Tencent's own generator, app
/// tokens, and the Easemob and Tencent bodies as dialect calls and messages.
@Suite("Vendor REST")
struct VendorRESTTests {
    struct Vector {
        var sdkAppID: UInt64
        var identifier: String
        var secretKey: String
        var time: Int64
        var expire: Int64
        var usersig: String
    }

    /// `usersig-vectors.json`, made by `make_usersig_vectors.py` with PyPI's `tls-sig-api-v2`.
    static let vectors: [Vector] = {
        let url = Repository.root.appendingPathComponent("Tests/PushBridgeVendorRESTTests/usersig-vectors.json")
        guard let data = try? Data(contentsOf: url), let document = try? JSONParser.parse(Array(data)) else { return [] }
        return (document["vectors"]?.arrayValue ?? []).map { v in
            Vector(
                sdkAppID: UInt64(v["sdkAppId"]?.intValue ?? 0), identifier: v["identifier"]?.stringValue ?? "", secretKey: v["secretKey"]?.stringValue ?? "",
                time: v["time"]?.intValue ?? 0, expire: v["expire"]?.intValue ?? 0, usersig: v["usersig"]?.stringValue ?? "")
        }
    }()

    @Test func thereAreVectors() { #expect(Self.vectors.count == 5) }

    @Test("Tencent's own UserSigs verify, and expire exactly at time + expire", arguments: vectors.indices)
    func tencentVectorsVerify(_ index: Int) throws {
        let v = Self.vectors[index]
        let sig = try UserSig.verify(v.usersig, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time)
        #expect(sig.time == v.time && sig.expire == v.expire && sig.identifier == v.identifier)
        #expect(throws: UserSig.Failure.expired(at: v.time + v.expire)) {
            try UserSig.verify(v.usersig, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time + v.expire)
        }
        _ = try UserSig.verify(v.usersig, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time + v.expire - 1)
    }

    @Test("every refusal has Tencent's code", arguments: vectors.indices)
    func refusals(_ index: Int) {
        let v = Self.vectors[index]
        func failure(_ sig: String, app: UInt64? = nil, identifier: String? = nil, key: String? = nil) -> Int? {
            do {
                _ = try UserSig.verify(sig, sdkAppID: app ?? v.sdkAppID, identifier: identifier ?? v.identifier, secretKey: key ?? v.secretKey, now: v.time)
                return nil
            } catch { return error.code }
        }
        #expect(failure("") == 70002)
        #expect(failure("not*a*sig") == 70003)
        #expect(failure(String(v.usersig.dropLast(8))) == 70003)
        #expect(failure(v.usersig, identifier: v.identifier + "x") == 70013)
        #expect(failure(v.usersig, app: v.sdkAppID &+ 1) == 70014)
        #expect(failure(v.usersig, key: v.secretKey + "0") == 70009)
    }

    @Test("PushBridge's generator makes what Tencent's does", arguments: vectors.indices)
    func generatorMatchesTencent(_ index: Int) throws {
        let v = Self.vectors[index]
        let ours = UserSig.generate(sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, time: v.time, expire: v.expire)
        let mine = try UserSig.verify(ours, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time)
        let theirs = try UserSig.verify(v.usersig, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time)
        #expect(mine == theirs)
    }

    @Test func aForgedSignatureNeverReadsAsExpired() {
        let v = Self.vectors[0]
        // A signature made with another key, long expired: the key is checked first.
        let forged = UserSig.generate(sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: "other", time: 1, expire: 1)
        #expect(throws: UserSig.Failure.badSignature) { try UserSig.verify(forged, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time) }
    }

    @Test func appTokens() {
        let key = Array("0123456789abcdef0123456789abcdef".utf8)
        let token = AppToken.issue(signingKey: key, expiresAt: Instant(milliseconds: 2_000))
        #expect(AppToken.check(token, signingKey: key, now: Instant(milliseconds: 1_999)) == .valid(expiresAt: Instant(milliseconds: 2_000)))
        #expect(AppToken.check(token, signingKey: key, now: Instant(milliseconds: 2_000)) == .expired(at: Instant(milliseconds: 2_000)))
        #expect(AppToken.check(token, signingKey: Array("another key of the same length!!".utf8), now: Instant(milliseconds: 0)) == .invalid)
        #expect(AppToken.check(token + "x", signingKey: key, now: Instant(milliseconds: 0)) == .invalid)
        #expect(AppToken.check("YWMtWY779DgJEeS2h9OR7fw4QgAAAUmO4Qukwd9cfJSpkWHiOa7MCSk0MrkVIco", signingKey: key, now: Instant(milliseconds: 0)) == .invalid)
        // The expiry is signed: a token edited to last longer is not a token.
        let parts = token.split(separator: ".")
        let longer = parts[0] + "." + AppTokenTestSupport.base64URL("9999999999999") + "." + parts[2]
        #expect(AppToken.check(String(longer), signingKey: key, now: Instant(milliseconds: 0)) == .invalid)
    }

    // MARK: Easemob

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

    // MARK: Tencent

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
