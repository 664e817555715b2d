import Crypto
import Foundation
import PushBridgeAPNsMock
import PushBridgeJSON

/// The APNs stand-in of black-box conformance (`conform --capture-apns HOST:PORT`): a
/// `MockAPNs` with a CA of the run's own, recording every request the server under test sends
/// (path, headers, payload bytes, provider token claims) and answering 200.
///
/// It points nothing itself: the server under test is configured by its operator to deliver to
/// ``baseURL`` and to trust ``authority``'s certificate.
public final class APNsCapture: Sendable {
    /// The mock underneath.
    public let mock: MockAPNs
    /// The CA whose certificate the server under test trusts.
    public let authority: MockAPNsIdentity.Authority

    /// The base URL to configure as the server's APNs URL.
    public var baseURL: String { mock.baseURL }

    /// Starts a capture.
    /// - Parameters:
    ///   - host: the address to listen on (the server under test must reach it; loopback in tests).
    ///   - port: the port (0: any free one).
    ///   - authority: the CA that signs the capture's certificate (a new one unless given).
    ///   - providerKey: a team's public key: provider tokens must be signed by it (any key id and
    ///     team), else APNs' 403 `InvalidProviderToken`; `nil`: tokens are recorded, not checked.
    public static func start(host: String, port: Int, authority: MockAPNsIdentity.Authority? = nil, providerKey: P256.Signing.PublicKey? = nil) async throws
        -> APNsCapture
    {
        let authority = try authority ?? MockAPNsIdentity.Authority.generate()
        var hosts = [host]
        if host == "127.0.0.1" || host == "0.0.0.0" { hosts = ["127.0.0.1", "localhost"] }
        var configuration = MockAPNs.Configuration(tokenKeys: providerKey.map { ["*": ("*", $0)] } ?? [:], port: port)
        configuration.host = host
        configuration.identity = try authority.issue(for: hosts)
        return APNsCapture(mock: try await MockAPNs.start(configuration), authority: authority)
    }

    init(mock: MockAPNs, authority: MockAPNsIdentity.Authority) {
        self.mock = mock
        self.authority = authority
    }

    /// Where the requests received so far end: what ``requests(since:)`` counts from.
    public var mark: Int { mock.requests.count }

    /// The requests received after `mark`, in arrival order.
    public func requests(since mark: Int) -> [MockAPNs.Request] {
        Array(mock.requests.dropFirst(mark))
    }

    /// Waits for the requests of one send: until `expected` have come after `mark` or `timeout`
    /// has passed, then `quiet` more for any extra one.
    public func collect(since mark: Int, expected: Int, timeout: Duration, quiet: Duration) async -> [MockAPNs.Request] {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        while requests(since: mark).count < expected, clock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        try? await Task.sleep(for: quiet)
        return requests(since: mark)
    }

    /// Every request so far, one JSON object a line, in arrival order: token, headers, payload, the
    /// provider token's claims and the answer (`conform --capture-log`). The provider token itself
    /// (a credential for an hour) is left out.
    public var log: String {
        var lines = ""
        for request in mock.requests {
            var headers = JSONObject()
            for (name, value) in request.headers.sorted(by: { $0.key < $1.key }) where name != "authorization" { headers[name] = .string(value) }
            var o = JSONObject([("token", .string(request.token)), ("headers", .object(headers)), ("payload", CapturedPushes.payload(of: request))])
            if let token = request.providerToken {
                o["providerToken"] = .object(JSONObject([("kid", .string(token.keyID)), ("iss", .string(token.teamID)), ("iat", .int(token.issuedAt))]))
            }
            o["status"] = .int(Int64(request.status))
            if let reason = request.reason { o["reason"] = .string(reason) }
            var w = JSONWriter()
            w.write(.object(o))
            lines += w.string + "\n"
        }
        return lines
    }

    /// Stops listening.
    public func stop() async { await mock.stop() }
}
