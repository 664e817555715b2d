import Crypto
import Foundation
import PushBridgeJSON

/// Tencent Cloud IM's UserSig v2, verified exactly as Tencent's `TLSSigAPIv2` makes it: JSON with
/// `TLS.ver` "2.0", `TLS.identifier`, `TLS.sdkappid`, `TLS.time`, `TLS.expire`, optionally
/// `TLS.userbuf`, and `TLS.sig` (base64 of HMAC-SHA256 with the app's secret key over
/// `TLS.identifier:…\nTLS.sdkappid:…\nTLS.time:…\nTLS.expire:…\n[TLS.userbuf:…\n]`), zlib-compressed,
/// then base64 with `+`→`*`, `/`→`-`, `=`→`_`.
public struct UserSig: Hashable, Sendable {
    /// The account the signature was made for.
    public var identifier: String
    /// The SDKAppID it was made for.
    public var sdkAppID: UInt64
    /// When it was made, in seconds since 1970.
    public var time: Int64
    /// How long it lasts, in seconds from `time`.
    public var expire: Int64
    /// The optional user buffer (base64 as signed).
    public var userbuf: String?

    /// Why a UserSig was refused; each maps to Tencent's error code (``code``).
    public enum Failure: Error, Hashable, Sendable {
        /// No `usersig` at all (70002).
        case empty
        /// Not the URL-safe base64 of a zlib stream of the documented JSON (70003).
        case malformed(String)
        /// Made for another account than `identifier` (70013).
        case identifierMismatch
        /// Made for another SDKAppID (70014).
        case appMismatch
        /// The HMAC does not verify with the app's secret key (70009).
        case badSignature
        /// Past `time + expire` (70001).
        case expired(at: Int64)

        /// Tencent's error code for this failure.
        public var code: Int {
            switch self {
            case .empty: return 70002
            case .malformed: return 70003
            case .identifierMismatch: return 70013
            case .appMismatch: return 70014
            case .badSignature: return 70009
            case .expired: return 70001
            }
        }

        /// Tencent-style error text; never shows the signature or the key.
        public var info: String {
            switch self {
            case .empty: return "usersig is empty: pass the administrator's UserSig as ?usersig="
            case .malformed(let why): return "usersig is not a UserSig v2 (\(why))"
            case .identifierMismatch: return "usersig was made for another identifier than ?identifier="
            case .appMismatch: return "usersig was made for another SDKAppID than ?sdkappid="
            case .badSignature: return "usersig does not verify with this SDKAppID's secret key"
            case .expired(let at): return "usersig expired at \(at) (TLS.time + TLS.expire, seconds since 1970)"
            }
        }
    }

    /// Verifies a UserSig.
    /// - Parameters:
    ///   - text: the `usersig` query value.
    ///   - sdkAppID: the request's `sdkappid`.
    ///   - identifier: the request's `identifier`.
    ///   - secretKey: the app's secret key.
    ///   - now: the current time in seconds since 1970.
    /// - Returns: the verified signature.
    /// - Throws: ``Failure``; a signature is checked before its expiry, so a forged one never reads as expired.
    public static func verify(_ text: String, sdkAppID: UInt64, identifier: String, secretKey: String, now: Int64) throws(Failure) -> UserSig {
        guard !text.isEmpty else { throw .empty }
        let (sig, claimed) = try decode(text)
        guard sig.identifier == identifier else { throw .identifierMismatch }
        guard sig.sdkAppID == sdkAppID else { throw .appMismatch }
        guard let claimedBytes = StrictBase64.standard.decode(claimed) else { throw .malformed("TLS.sig is not canonical base64") }
        let expected = sig.mac(secretKey: secretKey)
        guard ConstantTime.equal(claimedBytes, expected) else {
            throw .badSignature
        }
        let end = sig.time.addingReportingOverflow(sig.expire)
        guard !end.overflow, now < end.partialValue else { throw .expired(at: end.overflow ? Int64.max : end.partialValue) }
        return sig
    }

    /// Makes a UserSig as `TLSSigAPIv2.gen_sig` does (for tests, examples and clients of the service).
    /// - Parameters:
    ///   - sdkAppID: the app.
    ///   - identifier: the account.
    ///   - secretKey: the app's secret key.
    ///   - time: seconds since 1970.
    ///   - expire: seconds it lasts.
    public static func generate(sdkAppID: UInt64, identifier: String, secretKey: String, time: Int64, expire: Int64) -> String {
        let sig = UserSig(identifier: identifier, sdkAppID: sdkAppID, time: time, expire: expire, userbuf: nil)
        let json = JSONValue.object(
            JSONObject([
                ("TLS.ver", .string("2.0")), ("TLS.identifier", .string(identifier)), ("TLS.sdkappid", .int(Int64(bitPattern: sdkAppID))),
                ("TLS.expire", .int(expire)), ("TLS.time", .int(time)),
                ("TLS.sig", .string(StrictBase64.standard.encode(sig.mac(secretKey: secretKey)))),
            ]))
        var w = JSONWriter()
        w.write(json)
        return StrictBase64.tencent.encode(Zlib.deflate(w.bytes))
    }

    /// HMAC-SHA256 over the documented content, keyed with the secret key's UTF-8 bytes.
    func mac(secretKey: String) -> [UInt8] {
        var content = "TLS.identifier:\(identifier)\nTLS.sdkappid:\(sdkAppID)\nTLS.time:\(time)\nTLS.expire:\(expire)\n"
        if let userbuf { content += "TLS.userbuf:\(userbuf)\n" }
        let key = SymmetricKey(data: Array(secretKey.utf8))
        return Array(HMAC<SHA256>.authenticationCode(for: Array(content.utf8), using: key))
    }

    /// The signature's fields and its claimed `TLS.sig`.
    static func decode(_ text: String) throws(Failure) -> (UserSig, String) {
        // Strict: one spelling per signature (spare bits zero, exact padding).
        guard let compressed = StrictBase64.tencent.decode(text) else { throw .malformed("not Tencent's URL-safe base64") }
        guard let json = Zlib.inflate(compressed) else { throw .malformed("not a zlib stream") }
        guard case .object(let o)? = try? JSONParser.parse(json) else { throw .malformed("not a JSON object") }
        guard case .string("2.0")? = o["TLS.ver"] else { throw .malformed("TLS.ver is not \"2.0\"") }
        guard case .string(let identifier)? = o["TLS.identifier"] else { throw .malformed("no TLS.identifier") }
        guard let app = number(o["TLS.sdkappid"]), app >= 0 else { throw .malformed("no TLS.sdkappid") }
        guard let time = number(o["TLS.time"]) else { throw .malformed("no TLS.time") }
        guard let expire = number(o["TLS.expire"]) else { throw .malformed("no TLS.expire") }
        guard case .string(let claimed)? = o["TLS.sig"] else { throw .malformed("no TLS.sig") }
        var userbuf: String? = nil
        if let value = o["TLS.userbuf"] {
            guard case .string(let text) = value else { throw .malformed("TLS.userbuf is not a string") }
            userbuf = text
        }
        return (UserSig(identifier: identifier, sdkAppID: UInt64(app), time: time, expire: expire, userbuf: userbuf), claimed)
    }

    /// An integer field (Tencent's generators write numbers; some write digit strings).
    static func number(_ value: JSONValue?) -> Int64? {
        switch value {
        case .int(let n)?: return n
        case .string(let s)? where !s.isEmpty && s.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }): return Int64(s)
        default: return nil
        }
    }
}
