import Crypto

/// The `apns-id` of a delivery: a name-based UUID (version 5, SHA-1) of the app, the message id and
/// the device token, so that every retry of one delivery carries the same id and a duplicate is
/// recognisable on the receiving side (Specification §13).
public enum APNsID {
    /// PushBridge's namespace for the name-based UUIDs.
    static let namespace: [UInt8] = [0x6b, 0x1d, 0x2a, 0x9c, 0x4e, 0x0f, 0x5d, 0x3a, 0x8f, 0x27, 0x61, 0xc4, 0x0b, 0x9e, 0x52, 0xd7]

    /// The id: lower-case 8-4-4-4-12 hex.
    /// - Parameters:
    ///   - app: the app id.
    ///   - message: the message id.
    ///   - token: the device token.
    public static func make(app: String, message: String, token: String) -> String {
        var name = namespace
        name += app.utf8
        name.append(0)
        name += message.utf8
        name.append(0)
        name += token.lowercased().utf8
        var bytes = Array(Insecure.SHA1.hash(data: name).prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x50
        bytes[8] = (bytes[8] & 0x3f) | 0x80
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(36)
        for (i, byte) in bytes.enumerated() {
            if i == 4 || i == 6 || i == 8 || i == 10 { out.append(UInt8(ascii: "-")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
