import Hummingbird
import PushBridgeVendorREST
import NIOCore
import PushBridgeCore
import PushBridgeJSON
import PushBridgeServer

/// An Easemob / Agora Chat REST error: the status and the vendor's `error` / `error_description`.
struct EasemobFailure: VendorRefusal, Sendable {
    var status: HTTPResponse.Status
    var error: String
    var description: String
    var retryAfterSeconds: Int? = nil

    /// A bad field of the body: 400 `illegal_argument` naming the JSON pointer.
    init(_ error: InputError) {
        self.init(status: .badRequest, error: error.code == .malformedJSON ? "json_parse" : "illegal_argument", description: error.vendorText)
    }

    init(status: HTTPResponse.Status, error: String, description: String, retryAfterSeconds: Int? = nil) {
        self.status = status
        self.error = error
        self.description = description
        self.retryAfterSeconds = retryAfterSeconds
    }

    /// A refusal of the service's own (size, media type, busy store, …) in the vendor's shape.
    init(_ error: ServiceError) {
        let name: String
        switch error.status.code {
        case 401: name = "unauthorized"
        case 404: name = "service_resource_not_found"
        case 413: name = "request_entity_too_large"
        case 415: name = "unsupported_media_type"
        case 503: name = "service_unavailable"
        case 500...: name = "internal_server_error"
        default:
            name = error.code == "malformed-json" ? "json_parse" : error.code == "duplicate-unique-property" ? "duplicate_unique_property_exists" : "illegal_argument"
        }
        var text = (error.pointer.isEmpty ? "" : error.pointer + ": ") + "expected " + error.expected
        if let found = error.found { text += ", found " + found }
        self.init(status: error.status, error: name, description: text, retryAfterSeconds: error.retryAfterSeconds)
    }

    static let unauthorized = EasemobFailure(status: .unauthorized, error: "unauthorized", description: "Unable to authenticate (OAuth)")
    static let expired = EasemobFailure(status: .unauthorized, error: "unauthorized", description: "Unable to authenticate due to expired access token")

    func response() -> Response {
        var w = JSONWriter(capacity: 160)
        w.write(
            .object(
                JSONObject([
                    ("error", .string(error)), ("exception", .string("PushBridge." + error)), ("timestamp", .int(Instant.now.milliseconds)),
                    ("duration", 0), ("error_description", .string(description)),
                ])))
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: w.bytes)))
    }
}
