import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import PushBridgeConformance
import PushBridgeJSON
import PushBridgeServiceConformance
import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Testing

/// The real binary at debug log level: no vendor secret, token or signature reaches its log.
@Suite("Vendor REST secrets")
struct VendorSecretsTests {
    @Test func noSecretReachesTheLog() async throws {
        let server = try await ProcessScenario.ServerProcess.start(
            database: temporaryDirectory() + "/data", extraEnvironment: ["PUSHBRIDGE_LOG_LEVEL": "debug"])
        let secrets = try await withHTTPClient { client -> [String] in
            let created = try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"quiet"}"#)
            let key = try #require(created.json?["key"]?.stringValue)
            let clientSecret = "YXA6-client-secret-never-logged"
            let tencentKey = "tencent-secret-key-never-logged"
            _ = try await client.call(.PUT, server.base + "/v1/apps/quiet/vendors/easemob", key: key,
                body: #"{"org":"acme","app":"quiet","clientId":"YXA6-id","clientSecret":"\#(clientSecret)"}"#)
            _ = try await client.call(.PUT, server.base + "/v1/apps/quiet/vendors/tencent", key: key,
                body: #"{"sdkAppId":1400000999,"secretKey":"\#(tencentKey)"}"#)
            let token = try await client.call(.POST, server.base + "/acme/quiet/token", key: nil,
                body: #"{"grant_type":"client_credentials","client_id":"YXA6-id","client_secret":"\#(clientSecret)"}"#)
            let access = try #require(token.json?["access_token"]?.stringValue)
            _ = try await client.call(.PUT, server.base + "/acme/quiet/users/bob", key: access, body: #"{"nickname":"Bob"}"#)
            _ = try await client.call(.POST, server.base + "/acme/quiet/token", key: nil,
                body: #"{"grant_type":"client_credentials","client_id":"YXA6-id","client_secret":"wrong-\#(clientSecret)"}"#)
            let sig = UserSig.generate(sdkAppID: 1_400_000_999, identifier: "administrator", secretKey: tencentKey, time: Int64(Date().timeIntervalSince1970), expire: 600)
            let answer = try await client.call(.POST, server.base + "/v4/openim/sendmsg?sdkappid=1400000999&identifier=administrator&usersig=\(sig)&random=1",
                key: nil, body: #"{"To_Account":"bob","MsgRandom":3,"MsgBody":[{"MsgType":"TIMTextElem","MsgContent":{"Text":"x"}}]}"#)
            #expect(answer.json?["ActionStatus"] == "OK", "\(answer.text)")
            // Agora Chat: the App Certificate, its app token and the token it is exchanged for.
            let calm = try #require(try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"calm"}"#).json?["key"]?.stringValue)
            let certificate = "c0ffee0123456789abcdef0123456789"
            _ = try await client.call(.PUT, server.base + "/v1/apps/calm/vendors/agora", key: calm,
                body: #"{"org":"agora-org","app":"calm","appId":"\#(AgoraRoutesTests.appID)","appCertificate":"\#(certificate)"}"#)
            _ = try await client.call(.PUT, server.base + "/v1/apps/calm/vendors/agora", key: calm,
                body: #"{"org":"agora-org","app":"calm","appId":"\#(AgoraRoutesTests.appID)","appCertificate":"not-hex-\#(certificate)"}"#)
            let agoraToken = AgoraRoutesTests.token(certificate: certificate)
            #expect(try await client.call(.PUT, server.base + "/agora-org/calm/users/bob", key: agoraToken, body: #"{"nickname":"Bob"}"#).status == 200)
            let exchanged = try await client.call(.POST, server.base + "/agora-org/calm/token", key: agoraToken, body: #"{"grant_type":"agora"}"#)
            let agoraAccess = try #require(exchanged.json?["access_token"]?.stringValue, "\(exchanged.text)")
            return [clientSecret, tencentKey, access, sig, key, certificate, agoraToken, agoraAccess, calm]
        }
        #expect(await server.stop(signal: SIGTERM) == 0)
        let log = server.log
        #expect(log.contains("vendor bound") && log.contains("app token issued") && log.contains("agora app token exchanged"), "\(log.suffix(1500))")
        for secret in secrets { #expect(!log.contains(secret), "a secret reached the log") }
    }
}
