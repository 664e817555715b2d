import Foundation
import PushBridgeCore
import PushBridgeJSON
@testable import PushBridgeVendorREST
import PushBridgeTestSupport
import PushBridgeVendorRESTTestSupport
import Testing

/// One spelling per secret: a campaign found an app token accepted with its last
/// character changed (`…m3BTA` issued, `…m3BTB` accepted), since the base64 decoder ignored the last
/// character's spare bits. Every decoder that reads a signature now refuses every other spelling.
@Suite("Strict encodings")
struct StrictEncodingTests {
    static let alphabets: [(String, StrictBase64)] = [("standard", .standard), ("url", .url), ("tencent", .tencent)]

    static func siblings(of text: String, alphabet: StrictBase64) -> [String] { AppTokenTestSupport.siblings(of: text, alphabet: alphabet) }

    @Test("round trips, and agrees with Foundation on canonical text", arguments: 0..<48)
    func roundTrips(_ length: Int) {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for (name, alphabet) in Self.alphabets {
            let text = alphabet.encode(bytes)
            #expect(alphabet.decode(text) == bytes, "\(name) \(length)")
        }
        #expect(StrictBase64.standard.encode(bytes) == Data(bytes).base64EncodedString())
    }

    @Test("a changed spare bit, wrong padding, white space: refused")
    func otherSpellingsAreRefused() {
        for length in 1...40 where length % 3 != 0 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 * 37 + 11) }
            for (name, alphabet) in Self.alphabets {
                let text = alphabet.encode(bytes)
                let siblings = Self.siblings(of: text, alphabet: alphabet)
                #expect(siblings.count == (length % 3 == 1 ? 15 : 3), "\(name) \(length)")
                for sibling in siblings {
                    #expect(alphabet.decode(sibling) == nil, "\(name): \(sibling) is another spelling of \(text)")
                    // What the campaign found: the lenient decoder took them.
                    if name == "standard" { #expect(Data(base64Encoded: sibling).map(Array.init) == bytes) }
                }
                if let padding = alphabet.padding {
                    let bare = String(text.utf8.prefix { $0 != padding })!
                    #expect(alphabet.decode(bare) == nil, "\(name): unpadded")
                    #expect(alphabet.decode(text + String(UnicodeScalar(padding))) == nil, "\(name): padded twice")
                } else {
                    #expect(alphabet.decode(text + "=") == nil)
                }
                #expect(alphabet.decode(" " + text) == nil && alphabet.decode(text + "\n") == nil)
            }
        }
        #expect(StrictBase64.url.decode("A") == nil && StrictBase64.standard.decode("A===") == nil)
        #expect(StrictBase64.standard.decode("") == [] && StrictBase64.url.decode("") == [])
    }

    @Test func anAppTokenHasOneSpelling() {
        let key = Array("0123456789abcdef0123456789abcdef".utf8)
        let now = Instant(milliseconds: 0)
        for expiry in [1_000, 2_000, 12_345_678_901, 1_764_000_000_000] as [Int64] {
            let token = AppToken.issue(signingKey: key, expiresAt: Instant(milliseconds: expiry))
            #expect(AppToken.check(token, signingKey: key, now: now) == .valid(expiresAt: Instant(milliseconds: expiry)))
            // The signature: 32 bytes, 43 characters, 2 spare bits → 3 other spellings.
            let siblings = Self.siblings(of: token, alphabet: .url)
            #expect(siblings.count == 3)
            for sibling in siblings { #expect(AppToken.check(sibling, signingKey: key, now: now) == .invalid, "\(sibling)") }
            // The expiry part too: its spare bits are signed over as text, but must not be respelled either.
            let parts = token.split(separator: ".").map(String.init)
            for sibling in Self.siblings(of: parts[1], alphabet: .url) {
                #expect(AppToken.check(parts[0] + "." + sibling + "." + parts[2], signingKey: key, now: now) == .invalid)
            }
        }
    }

    @Test("a UserSig has one spelling, outside and in TLS.sig", arguments: VendorRESTTests.vectors.indices)
    func aUserSigHasOneSpelling(_ index: Int) throws {
        let v = VendorRESTTests.vectors[index]
        func verify(_ sig: String) throws -> UserSig {
            try UserSig.verify(sig, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time)
        }
        _ = try verify(v.usersig)
        let outside = Self.siblings(of: v.usersig, alphabet: .tencent)
        for sibling in outside {
            #expect(throws: UserSig.Failure.malformed("not Tencent's URL-safe base64")) { try verify(sibling) }
        }
        // TLS.sig respelled inside an otherwise genuine UserSig (recompressed): refused, not verified.
        guard let inner = Zlib.inflate(StrictBase64.tencent.decode(v.usersig) ?? []), case .object(var o) = try JSONParser.parse(inner),
            case .string(let mac)? = o["TLS.sig"]
        else {
            Issue.record("vector \(index) does not decode")
            return
        }
        let respelled = Self.siblings(of: mac, alphabet: .standard)
        #expect(respelled.count == 3)
        for sibling in respelled {
            o["TLS.sig"] = .string(sibling)
            var w = JSONWriter()
            w.write(.object(o))
            let forged = StrictBase64.tencent.encode(Zlib.deflate(w.bytes))
            #expect(throws: UserSig.Failure.malformed("TLS.sig is not canonical base64")) { try verify(forged) }
        }
    }

    @Test("below base64 a UserSig is what Tencent's server reads: any zlib stream, any JSON spacing", arguments: VendorRESTTests.vectors.indices)
    func aUserSigsBytesMayBeCompressedAndSpacedAnyWay(_ index: Int) throws {
        let v = VendorRESTTests.vectors[index]
        func verify(_ sig: String) throws -> UserSig {
            try UserSig.verify(sig, sdkAppID: v.sdkAppID, identifier: v.identifier, secretKey: v.secretKey, now: v.time)
        }
        let genuine = try verify(v.usersig)
        let inner = try #require(Zlib.inflate(StrictBase64.tencent.decode(v.usersig) ?? []))
        guard case .object(let o) = try JSONParser.parse(inner) else {
            Issue.record("vector \(index) is not an object")
            return
        }
        var compact = JSONWriter()
        compact.write(.object(o))
        // Tencent's Python generator: json.dumps (spaced), zlib level 6; its Go and Java ones: compact.
        for json in [inner, compact.bytes, CredentialSpellings.pythonSpaced(compact.bytes)] {
            for level in [0, 1, 6, 9] as [Int32] {
                let spelling = StrictBase64.tencent.encode(Zlib.deflate(json, level: level))
                #expect(try verify(spelling) == genuine, "level \(level), \(String(decoding: json, as: UTF8.self))")
            }
        }
        // What is signed has no second spelling: one field changed, however spelled, is refused.
        var changed = o
        changed["TLS.expire"] = .int(genuine.expire + 1)
        var w = JSONWriter()
        w.write(.object(changed))
        for json in [w.bytes, CredentialSpellings.pythonSpaced(w.bytes)] {
            #expect(throws: UserSig.Failure.badSignature) { try verify(StrictBase64.tencent.encode(Zlib.deflate(json, level: 1))) }
        }
    }

    @Test("below base64 an AccessToken2 is what Agora's server reads: any zlib stream of its bytes", arguments: AgoraTokenTests.vectors.indices.filter { AgoraTokenTests.vectors[$0].kind == "app" })
    func anAgoraTokensBytesMayBeCompressedAnyWay(_ index: Int) throws {
        let v = AgoraTokenTests.vectors[index]
        func verify(_ token: String) throws -> AgoraAccessToken {
            try AgoraAccessToken.verifyAppToken(token, appID: v.appID, appCertificate: v.certificate, now: v.issuedAt)
        }
        let genuine = try verify(v.token)
        var spellings: Set<String> = [v.token]
        for level in [0, 1, 6, 9] as [Int32] {
            let spelling = try #require(CredentialSpellings.agoraToken(v.token, level: level))
            spellings.insert(spelling)
            #expect(try verify(spelling) == genuine, "level \(level)")
        }
        #expect(spellings.count >= 3, "levels 0, 1 and 9 write different streams")
        // A changed byte of the signed content, recompressed: refused.
        var changed = try #require(Zlib.inflate(StrictBase64.standard.decode(v.token.utf8.dropFirst(3)) ?? []))
        changed[changed.count - 3] ^= 1
        #expect(throws: AgoraAccessToken.Failure.self) { try verify("007" + StrictBase64.standard.encode(Zlib.deflate(changed, level: 1))) }
    }
}
