import PushBridgeFacade
import Hummingbird
import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON

extension ServiceRoutes {
    /// `POST /v1/apps` (admin key), `GET` / `PUT /v1/apps/{app}` (the app's key).
    func registerApps(on router: RecordingRouter<Context>) {
        router.post("/v1/apps") { request, context in
            guard apps.isAdmin(request.bearerKey) else {
                if request.bearerKey == nil || apps.configuration.adminKeyHash == nil {
                    throw ServiceError(.unauthorized, code: "unauthorized",
                        expected: apps.configuration.adminKeyHash == nil
                            ? "an admin key configured on the service (admin-key-sha256 or PUSHBRIDGE_ADMIN_KEY)" : "Authorization: Bearer <the admin key>")
                }
                throw ServiceError(.forbidden, code: "forbidden", expected: "the admin key (apps are created with it only)")
            }
            let chosen = try await optionalBody(request, context).flatMap { body in
                try checking {
                    let reader = try FieldReader(body, at: .root, what: "{\"app\": id} or nothing")
                    try reader.allowOnly(["app"], context: "a new app")
                    return try reader.optionalString("app", expected: "the app id", allowEmpty: false)
                }
            }
            let id = chosen ?? "app-" + String(AccessKey.generate().dropFirst(4).prefix(12))
            guard Self.isValidAppID(id) else {
                throw ServiceError(.badRequest, code: "invalid-value", pointer: "/app",
                    expected: "an app id of 1–64 letters, digits, '.', '_' or '-', not starting with '.'", found: JSONWriter.quoted(id))
            }
            guard let key = try await apps.create(id) else {
                throw ServiceError(.conflict, code: "conflict", pointer: "/app", expected: "an app id not in use", found: JSONWriter.quoted(id))
            }
            logger.info("app created", metadata: ["app": "\(id)"])
            return json(.object(JSONObject([("app", .string(id)), ("key", .string(key))])), status: .created)
        }
        router.get("/v1/apps/:app") { request, context in
            let tenant = try await tenant(request, context)
            let app = try await answering { try await tenant.reading { try await $0.reading(EditScope(app: true)) { try $0.app() } } }
            return json(Self.appBody(tenant.id, app))
        }
        router.put("/v1/apps/:app") { request, context in
            let tenant = try await tenant(request, context)
            let body = try await body(request, context)
            let app = try await answering { () async throws -> AppConfiguration in
                let app = try Scenario.app(from: body, at: .root)
                try await tenant.update { try await $0.configure(app) }
                return app
            }
            return json(Self.appBody(tenant.id, app))
        }
    }

    static func appBody(_ id: String, _ app: AppConfiguration) -> JSONValue {
        guard case .object(let o) = app.jsonValue else { return .null }
        return .object(JSONObject([("app", .string(id))] + o.entries))
    }

    /// Letters, digits, `.`, `_`, `-`; 1–64 characters; not starting with `.` (it names a file).
    package static func isValidAppID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        guard (1...64).contains(bytes.count), bytes[0] != UInt8(ascii: ".") else { return false }
        return bytes.allSatisfy { b in
            (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == UInt8(ascii: ".") || b == UInt8(ascii: "_")
                || b == UInt8(ascii: "-")
        }
    }
}
