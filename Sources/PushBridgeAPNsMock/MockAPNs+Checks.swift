import Crypto
import Foundation

extension MockAPNs {
    /// The push types APNs knows (`apns-push-type`).
    static let pushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity", "pushtotalk", "widgets",
    ]

    /// Checks a request as APNs does; `nil` when it passes, else the status and reason to answer.
    /// - Parameters:
    ///   - method: the HTTP method.
    ///   - path: the request path.
    ///   - headers: lower-case names.
    ///   - payload: the body.
    ///   - now: epoch seconds.
    func check(method: String, path: String, headers: [String: String], payload: [UInt8], now: Int64) -> (status: Int, reason: String)? {
        guard method == "POST" else { return (405, "MethodNotAllowed") }
        guard path.hasPrefix("/3/device/") else { return (404, "BadPath") }
        let token = path.dropFirst("/3/device/".count)
        if token.isEmpty { return (400, "MissingDeviceToken") }
        guard token.count % 2 == 0, token.count >= 16, token.count <= 200, token.allSatisfy(\.isHexDigit) else { return (400, "BadDeviceToken") }
        if let failure = checkProviderToken(headers["authorization"], now: now) { return failure }
        guard let topic = headers["apns-topic"], !topic.isEmpty else { return (400, "MissingTopic") }
        if let type = headers["apns-push-type"], !Self.pushTypes.contains(type) { return (400, "InvalidPushType") }
        if let priority = headers["apns-priority"], !["5", "10", "1"].contains(priority) { return (400, "BadPriority") }
        if let id = headers["apns-id"], !Self.isUUID(id) { return (400, "BadMessageId") }
        if let expiration = headers["apns-expiration"], Int64(expiration) == nil { return (400, "BadExpirationDate") }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > 64 { return (400, "BadCollapseId") }
        if payload.isEmpty { return (400, "PayloadEmpty") }
        if payload.count > 4_096 { return (413, "PayloadTooLarge") }
        return nil
    }

    /// A provider token's header, claims and signature, checked against the configured keys.
    func checkProviderToken(_ authorization: String?, now: Int64) -> (status: Int, reason: String)? {
        guard !configuration.tokenKeys.isEmpty else { return nil }
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return (403, "MissingProviderToken") }
        let jwt = authorization.dropFirst("bearer ".count)
        let (cached, revokedBefore) = state.withLockedValue { ($0.verifiedTokens[jwt], $0.revokedBefore) }
        if let issuedAt = cached {
            return now - issuedAt > configuration.maximumTokenAgeSeconds || issuedAt < revokedBefore ? (403, "ExpiredProviderToken") : nil
        }
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = Self.base64URL(parts[0]), let claimBytes = Self.base64URL(parts[1]),
            let signature = Self.base64URL(parts[2]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any],
            header["alg"] as? String == "ES256", let kid = header["kid"] as? String,
            let issuer = claims["iss"] as? String, let issuedAt = (claims["iat"] as? NSNumber)?.int64Value
        else { return (403, "InvalidProviderToken") }
        guard let known = configuration.tokenKeys[kid] ?? configuration.tokenKeys["*"], known.teamID == issuer || known.teamID == "*" else {
            return (403, "InvalidProviderToken")
        }
        guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
            known.key.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8))
        else { return (403, "InvalidProviderToken") }
        state.withLockedValue { $0.verifiedTokens[jwt] = issuedAt }
        if now - issuedAt > configuration.maximumTokenAgeSeconds || issuedAt < revokedBefore { return (403, "ExpiredProviderToken") }
        return nil
    }

    static func isUUID(_ text: String) -> Bool {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        return groups.map(\.count) == [8, 4, 4, 4, 12] && groups.allSatisfy { $0.allSatisfy(\.isHexDigit) }
    }

    static func base64URL<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64).map { Array($0) }
    }
}

extension MockAPNs.Request {
    /// What a request's provider token says (header `kid`, claims `iss` and `iat`), read without
    /// checking its signature; `nil` without a bearer token (certificate auth) or for one that is
    /// not a JWT.
    public var providerToken: (keyID: String, teamID: String, issuedAt: Int64)? {
        guard let authorization = headers["authorization"], authorization.lowercased().hasPrefix("bearer ") else { return nil }
        let parts = authorization.dropFirst("bearer ".count).split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let headerBytes = MockAPNs.base64URL(parts[0]), let claimBytes = MockAPNs.base64URL(parts[1]),
            let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
            let claims = try? JSONSerialization.jsonObject(with: Data(claimBytes)) as? [String: Any],
            let kid = header["kid"] as? String, let issuer = claims["iss"] as? String, let issuedAt = (claims["iat"] as? NSNumber)?.int64Value
        else { return nil }
        return (kid, issuer, issuedAt)
    }
}
