import Foundation
import PushBridgeJSON
@testable import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeVendorRESTTestSupport
import Testing

/// Agora Chat's app tokens (AccessToken2), against tokens made by Agora's own published builder
/// (`agora-token-vectors.json`, made by `make_agora_vectors.py` with PyPI's `agora-rest-client-python`).
@Suite("Agora AccessToken2")
struct AgoraTokenTests {
    struct Vector {
        var kind: String
        var appID: String
        var certificate: String
        var issuedAt: Int64
        var expire: Int64
        var token: String
    }

    static let vectors: [Vector] = {
        let url = Repository.root.appendingPathComponent("Tests/PushBridgeVendorRESTTests/agora-token-vectors.json")
        guard let data = try? Data(contentsOf: url), let document = try? JSONParser.parse(Array(data)) else { return [] }
        return (document["vectors"]?.arrayValue ?? []).map { v in
            Vector(
                kind: v["kind"]?.stringValue ?? "", appID: v["appId"]?.stringValue ?? "", certificate: v["appCertificate"]?.stringValue ?? "",
                issuedAt: v["issueTs"]?.intValue ?? 0, expire: v["expire"]?.intValue ?? 0, token: v["token"]?.stringValue ?? "")
        }
    }()

    @Test func thereAreVectors() { #expect(Self.vectors.count == 6) }

    @Test("Agora's own app tokens verify, and expire exactly at issue_ts + expire", arguments: vectors.indices.filter { vectors[$0].kind == "app" })
    func agorasAppTokensVerify(_ index: Int) throws {
        let v = Self.vectors[index]
        func verify(_ now: Int64) throws -> AgoraAccessToken {
            try AgoraAccessToken.verifyAppToken(v.token, appID: v.appID, appCertificate: v.certificate, now: now)
        }
        let token = try verify(v.issuedAt)
        #expect(token.appID == v.appID && token.issuedAt == v.issuedAt && token.expiresAt == v.issuedAt + v.expire && token.chatUserID == "")
        _ = try verify(v.issuedAt + v.expire - 1)
        #expect(throws: AgoraAccessToken.Failure.expired(at: v.issuedAt + v.expire)) { try verify(v.issuedAt + v.expire) }
        // PushBridge's builder, given the same salt, signs the same content the same way.
        let (_, _, content, salt) = try AgoraAccessToken.decode(v.token)
        let ours = AgoraAccessToken.build(appID: v.appID, appCertificate: v.certificate, issuedAt: UInt32(v.issuedAt), expire: UInt32(v.expire), salt: salt)
        let (_, oursSignature, oursContent, _) = try AgoraAccessToken.decode(ours)
        let (_, theirSignature, _, _) = try AgoraAccessToken.decode(v.token)
        #expect(oursContent == content && oursSignature == theirSignature)
    }

    @Test("every refusal", arguments: vectors.indices)
    func refusals(_ index: Int) throws {
        let v = Self.vectors[index]
        let now = v.issuedAt
        func verify(_ token: String = v.token, app: String? = nil, certificate: String? = nil) throws {
            _ = try AgoraAccessToken.verifyAppToken(token, appID: app ?? v.appID, appCertificate: certificate ?? v.certificate, now: now)
        }
        switch v.kind {
        case "user", "rtc": #expect(throws: AgoraAccessToken.Failure.notAnAppToken) { try verify() }
        case "too-long": #expect(throws: AgoraAccessToken.Failure.tooLong(seconds: v.expire)) { try verify() }
        default: try verify()
        }
        // Another certificate, another App ID: refused before anything else is read of it.
        #expect(throws: AgoraAccessToken.Failure.badSignature) { try verify(certificate: "00000000000000000000000000000000") }
        #expect(throws: AgoraAccessToken.Failure.otherApp) { try verify(app: "00000000000000000000000000000000") }
        // One spelling per token; not a token at all.
        let siblings = AppTokenTestSupport.siblings(of: String(v.token.dropFirst(3)), alphabet: .standard)
        #expect(!siblings.isEmpty || v.token.dropFirst(3).utf8.filter { $0 != UInt8(ascii: "=") }.count % 4 == 0)
        for sibling in siblings {
            #expect(throws: AgoraAccessToken.Failure.malformed("not canonical base64 after 007")) { try verify("007" + sibling) }
        }
        #expect(throws: AgoraAccessToken.Failure.self) { try verify("006" + v.token.dropFirst(3)) }
        #expect(throws: AgoraAccessToken.Failure.self) { try verify(String(v.token.dropLast(8))) }
        #expect(throws: AgoraAccessToken.Failure.self) { try verify("pbt1.x.y") }
    }

    @Test func aForgedTokenNeverReadsAsExpired() {
        let v = Self.vectors[0]
        let forged = AgoraAccessToken.build(appID: v.appID, appCertificate: "ffffffffffffffffffffffffffffffff", issuedAt: 1, expire: 1, salt: 7)
        #expect(throws: AgoraAccessToken.Failure.badSignature) {
            try AgoraAccessToken.verifyAppToken(forged, appID: v.appID, appCertificate: v.certificate, now: v.issuedAt)
        }
    }
}
