import PushBridgeAPNsMock
import PushBridgeConformance
import PushBridgeJSON

/// What black-box conformance can see of a decision: the requests that reached APNs, in the shape
/// of a fixture's `expect` — `push`, the `payload`, and per delivery the device token and the
/// headers APNs reads (`apns-topic`, `apns-push-type`, `apns-priority`, `apns-expiration` where
/// expected, `apns-collapse-id`). A reason for not pushing and a device's environment never reach
/// APNs' wire (one capture stands for both gateways), so they are not compared.
enum CapturedPushes {
    static let headers = ["apns-topic", "apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id"]

    /// The observable part of a fixture's `expect`.
    static func expected(_ expect: JSONObject) -> JSONValue {
        guard expect["push"] == .bool(true) else { return ["push": false] }
        let deliveries = (expect["deliveries"]?.arrayValue ?? []).map { delivery -> JSONValue in
            var headers = JSONObject()
            for name in Self.headers { if let value = delivery["headers"]?[name] { headers[name] = value } }
            return .object(JSONObject([("token", delivery["device"]?["token"] ?? .null), ("headers", .object(headers))]))
        }
        var o = JSONObject([("push", true)])
        if let payload = expect["payload"] { o["payload"] = payload }
        o["deliveries"] = .array(deliveries.sorted { ($0["token"]?.stringValue ?? "") < ($1["token"]?.stringValue ?? "") })
        return .object(o)
    }

    /// The captured requests in the same shape: the first request's payload; a request whose
    /// payload differs from it carries its own under its delivery.
    static func got(_ requests: [MockAPNs.Request], expected: JSONValue, renaming: (JSONValue) -> JSONValue = { $0 }) -> JSONValue {
        guard !requests.isEmpty else { return ["push": false] }
        let comparesExpiration = expected["deliveries"]?.arrayValue?.contains { $0["headers"]?["apns-expiration"] != nil } ?? false
        func payload(_ request: MockAPNs.Request) -> JSONValue { renaming(Self.payload(of: request)) }
        let sorted = requests.sorted { $0.token < $1.token }
        let first = payload(requests[0])
        let deliveries = sorted.map { request -> JSONValue in
            var headers = JSONObject()
            for name in Self.headers where name != "apns-expiration" || comparesExpiration {
                if let value = request.headers[name] { headers[name] = .string(value) }
            }
            var o = JSONObject([("token", .string(request.token)), ("headers", .object(headers))])
            let own = payload(request)
            if own != first { o["payload"] = own }
            return .object(o)
        }
        return .object(JSONObject([("push", true), ("payload", first), ("deliveries", .array(deliveries))]))
    }

    /// A request's payload as JSON, or as text when it is not JSON (the comparison then says so).
    static func payload(of request: MockAPNs.Request) -> JSONValue {
        (try? JSONParser.parse(request.payload)) ?? .string(String(decoding: request.payload, as: UTF8.self))
    }

    /// The strict differences between a fixture's expectation (as ``expected(_:)`` made it) and the
    /// captured requests.
    /// - Parameter renaming: puts the fixture's names in place of ids the service made up.
    static func differences(expected wanted: JSONValue, requests: [MockAPNs.Request], renaming: (JSONValue) -> JSONValue = { $0 }) throws -> [JSONDifference] {
        var w = JSONWriter()
        w.write(got(requests, expected: wanted, renaming: renaming))
        return try StrictComparison.differences(expected: wanted, got: w.bytes)
    }
}
