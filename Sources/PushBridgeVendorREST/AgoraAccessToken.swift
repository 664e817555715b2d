import Crypto
import PushBridgeCore

/// Agora's AccessToken2 (`007…`), read and verified exactly as Agora's own builders make it
/// (`AccessToken2` in AgoraIO/Tools, `agora_rest.utils.AccessToken2` on PyPI): `"007"` then
/// standard base64 of a zlib stream holding the signature (a 16-bit-length string) and the signed
/// content — the App ID, `issue_ts`, `expire`, `salt` (little-endian 32-bit) and the services, each
/// its type, its privileges (16-bit keys to 32-bit expiries) and its own fields. The signature is
/// HMAC-SHA256 of the content keyed with HMAC(salt, HMAC(issue_ts, App Certificate)).
///
/// Agora Chat's REST takes an *app token*: the Chat service (5) with the app privilege (2) and no
/// user id. Nothing here does I/O; the App Certificate comes from the app's binding.
public struct AgoraAccessToken: Hashable, Sendable {
    /// The App ID the token was made for.
    public var appID: String
    /// When it was made, in seconds since 1970.
    public var issuedAt: Int64
    /// How long it lasts, in seconds from ``issuedAt``.
    public var expire: Int64
    /// The services it carries: type → privilege → expiry (seconds from ``issuedAt``).
    public var services: [UInt16: [UInt16: UInt32]]
    /// The Chat service's user id (`""` for an app token).
    public var chatUserID: String?

    /// Agora's service type for Chat.
    public static let chatService: UInt16 = 5
    /// Agora Chat's app privilege (a user token has 1, `PrivilegeChatUser`).
    public static let appPrivilege: UInt16 = 2
    /// The longest an app token may last (Agora: 24 hours).
    public static let maximumSeconds: Int64 = 86_400
    /// How far ahead of the server's clock a token's `issue_ts` may be (the builder's clock running fast).
    public static let maximumClockSkewSeconds: Int64 = 300

    /// Why a token was refused.
    public enum Failure: Error, Hashable, Sendable {
        /// Not `007` + base64 of a zlib stream of the documented layout.
        case malformed(String)
        /// Made for another App ID.
        case otherApp
        /// The signature does not verify with the App Certificate.
        case badSignature
        /// Not an app token: no Chat service with the app privilege, or a user id.
        case notAnAppToken
        /// Past its expiry (seconds since 1970).
        case expired(at: Int64)
        /// Lasting longer than Agora lets an app token last.
        case tooLong(seconds: Int64)
        /// Made later than the server's clock allows (`issue_ts` more than ``maximumClockSkewSeconds`` ahead).
        case issuedInTheFuture(at: Int64)
    }

    /// Verifies an app token of Agora Chat.
    /// - Parameters:
    ///   - text: the bearer token.
    ///   - appID: the binding's App ID.
    ///   - appCertificate: the binding's App Certificate.
    ///   - now: seconds since 1970.
    /// - Returns: the token, when it is a genuine, current app token for this App ID, made no more than
    ///   ``maximumClockSkewSeconds`` after `now`.
    /// - Throws: ``Failure``; the signature is checked before the times, so a forged token never reads as expired.
    public static func verifyAppToken(_ text: String, appID: String, appCertificate: String, now: Int64) throws(Failure) -> AgoraAccessToken {
        let (token, signature, content, salt) = try decode(text)
        guard token.appID == appID else { throw .otherApp }
        let expected = sign(content, appCertificate: appCertificate, issuedAt: UInt32(token.issuedAt), salt: salt)
        guard ConstantTime.equal(signature, expected) else { throw .badSignature }
        guard token.services[chatService]?[appPrivilege] != nil, token.chatUserID == "" else { throw .notAnAppToken }
        let end = token.expiresAt
        guard end - token.issuedAt <= maximumSeconds else { throw .tooLong(seconds: end - token.issuedAt) }
        guard token.issuedAt <= now + maximumClockSkewSeconds else { throw .issuedInTheFuture(at: token.issuedAt) }
        guard now < end else { throw .expired(at: end) }
        return token
    }

    /// When a verified token stops working, in seconds since 1970.
    public var expiresAt: Int64 {
        let privilege = services[Self.chatService]?[Self.appPrivilege].map(Int64.init) ?? expire
        return issuedAt + min(expire, privilege)
    }

    /// Makes an app token as Agora's `ChatTokenBuilder.buildAppToken` does (for tests and examples).
    /// - Parameters:
    ///   - appID: the App ID (32 hex digits).
    ///   - appCertificate: the App Certificate (32 hex digits).
    ///   - issuedAt: seconds since 1970.
    ///   - expire: seconds it lasts.
    ///   - salt: Agora's builders draw it at random (1–99999999).
    ///   - privilege: the Chat privilege (``appPrivilege``; 1 with a user id makes a user token).
    ///   - userID: the Chat user id (empty for an app token).
    public static func build(
        appID: String, appCertificate: String, issuedAt: UInt32, expire: UInt32, salt: UInt32, privilege: UInt16 = appPrivilege, userID: String = ""
    ) -> String {
        var content = Packer()
        content.string(Array(appID.utf8))
        content.uint32(issuedAt)
        content.uint32(expire)
        content.uint32(salt)
        content.uint16(1)
        content.uint16(chatService)
        content.uint16(1)
        content.uint16(privilege)
        content.uint32(expire)
        content.string(Array(userID.utf8))
        var whole = Packer()
        whole.string(sign(content.bytes, appCertificate: appCertificate, issuedAt: issuedAt, salt: salt))
        return "007" + StrictBase64.standard.encode(Zlib.deflate(whole.bytes + content.bytes))
    }

    static func sign(_ content: [UInt8], appCertificate: String, issuedAt: UInt32, salt: UInt32) -> [UInt8] {
        func mac(key: [UInt8], _ data: [UInt8]) -> [UInt8] { Array(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key))) }
        let signing = mac(key: Packer.littleEndian(salt), mac(key: Packer.littleEndian(issuedAt), Array(appCertificate.utf8)))
        return mac(key: signing, content)
    }

    /// The token's fields, its signature, the signed content and its salt.
    static func decode(_ text: String) throws(Failure) -> (AgoraAccessToken, [UInt8], [UInt8], UInt32) {
        guard text.hasPrefix("007") else { throw .malformed("not an AccessToken2 (it starts with 007)") }
        guard let compressed = StrictBase64.standard.decode(text.utf8.dropFirst(3)) else { throw .malformed("not canonical base64 after 007") }
        guard let bytes = Zlib.inflate(compressed) else { throw .malformed("not a zlib stream") }
        var reader = Unpacker(bytes)
        guard let signature = reader.string(), let contentStart = Optional(reader.offset), let app = reader.string(), let issued = reader.uint32(),
            let expire = reader.uint32(), let salt = reader.uint32(), let count = reader.uint16()
        else { throw .malformed("cut short") }
        var services: [UInt16: [UInt16: UInt32]] = [:]
        var chatUser: String?
        for _ in 0..<count {
            guard let type = reader.uint16(), let privilegeCount = reader.uint16() else { throw .malformed("a service cut short") }
            var privileges: [UInt16: UInt32] = [:]
            for _ in 0..<privilegeCount {
                guard let key = reader.uint16(), let value = reader.uint32() else { throw .malformed("a privilege cut short") }
                privileges[key] = value
            }
            // Each service's own fields (Agora's layout): strings, and APaaS's 16-bit role.
            let strings: Int
            switch type {
            case 1: strings = 2  // RTC: channel, uid
            case 2, 5: strings = 1  // RTM, Chat: user id
            case 4: strings = 0  // FPA
            case 7: strings = 2  // APaaS: room, user (and a role below)
            default: throw .malformed("an unknown service type \(type)")
            }
            var fields: [[UInt8]] = []
            for _ in 0..<strings {
                guard let field = reader.string() else { throw .malformed("a service's fields cut short") }
                fields.append(field)
            }
            if type == 7 { guard reader.uint16() != nil else { throw .malformed("a service's fields cut short") } }
            if type == chatService {
                guard let user = String(validating: fields[0], as: UTF8.self) else { throw .malformed("a user id that is not UTF-8") }
                chatUser = user
            }
            services[type] = privileges
        }
        guard reader.offset == bytes.count else { throw .malformed("bytes after the services") }
        guard let appID = String(validating: app, as: UTF8.self) else { throw .malformed("an App ID that is not UTF-8") }
        let token = AgoraAccessToken(appID: appID, issuedAt: Int64(issued), expire: Int64(expire), services: services, chatUserID: chatUser)
        return (token, signature, Array(bytes[contentStart...]), salt)
    }
}

/// Agora's packer: little-endian integers, strings as a 16-bit length and bytes.
struct Packer {
    var bytes: [UInt8] = []

    static func littleEndian(_ value: UInt32) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)] }

    mutating func uint16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
    mutating func uint32(_ value: UInt32) { bytes += Self.littleEndian(value) }
    mutating func string(_ value: [UInt8]) {
        uint16(UInt16(value.count))
        bytes += value
    }
}

/// Reads what ``Packer`` writes; `nil` past the end.
struct Unpacker {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func uint16() -> UInt16? {
        guard offset + 2 <= bytes.count else { return nil }
        defer { offset += 2 }
        return UInt16(bytes[offset]) | UInt16(bytes[offset + 1]) << 8
    }

    mutating func uint32() -> UInt32? {
        guard offset + 4 <= bytes.count else { return nil }
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    mutating func string() -> [UInt8]? {
        guard let count = uint16(), offset + Int(count) <= bytes.count else { return nil }
        defer { offset += Int(count) }
        return Array(bytes[offset..<offset + Int(count)])
    }
}
