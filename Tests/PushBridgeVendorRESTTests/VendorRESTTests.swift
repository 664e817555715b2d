import Foundation
import PushBridgeCore
import PushBridgeJSON
import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeVendorRESTTestSupport
import Testing

/// The vendor credentials on their own: UserSig v2 against Tencent's own generator, and app tokens.
/// (Each vendor's REST bodies are tested with its module: PushBridgeEasemobTests, PushBridgeTencentTests.)
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
}
