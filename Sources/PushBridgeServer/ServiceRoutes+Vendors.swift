import Hummingbird
import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

extension ServiceRoutes {
    /// The vendor credentials an app answers the vendors' REST with (Specification §12): `PUT` / `DELETE
    /// /v1/apps/{app}/vendors/{vendor}`, `GET /v1/apps/{app}/vendors`, for the families the service
    /// serves (each reads and shows its own binding). Secrets go in and never come out: answers show
    /// the client id, App ID or administrator only.
    func registerVendors(on router: RecordingRouter<Context>) {
        router.get("/v1/apps/:app/vendors") { request, context in
            let tenant = try await tenant(request, context)
            let bodies = apps.bindings(of: tenant.id).compactMap { binding in vendors.family(of: binding)?.describe(binding) }
            return json(.object(JSONObject([("vendors", .array(bodies))])))
        }
        router.put("/v1/apps/:app/vendors/:vendor") { request, context in
            let tenant = try await tenant(request, context)
            let (family, name) = try self.family(context)
            let body = try await body(request, context)
            let binding = try checking { try family.binding(named: name, body: body, app: tenant.id, now: .now) }
            guard try await apps.bind(binding) else {
                throw ServiceError(.conflict, code: "conflict", pointer: family.conflict.pointer, expected: family.conflict.expected, found: JSONWriter.quoted(binding.key))
            }
            logger.info("vendor bound", metadata: ["app": "\(tenant.id)", "vendor": "\(name)", "key": "\(binding.key)"])
            return json(family.describe(binding))
        }
        router.delete("/v1/apps/:app/vendors/:vendor") { request, context in
            let tenant = try await tenant(request, context)
            let (family, name) = try self.family(context)
            // Names of one family (a vendor's two kinds of credentials) are kinds of one binding: each removes only its own.
            let bound = apps.bindings(of: tenant.id).first { $0.vendor == family.kind }
            guard let bound, family.name(of: bound) == name, try await apps.unbind(app: tenant.id, vendor: family.kind) else {
                throw ServiceError(.notFound, code: "unknown-reference", pointer: "", expected: "a vendor bound to the app", found: JSONWriter.quoted(name))
            }
            return json(.object(JSONObject([("removed", .string(name))])))
        }
    }

    /// The family the path's `{vendor}` names, with the name.
    func family(_ context: Context) throws -> (any VendorREST, name: String) {
        let name = try parameter("vendor", context)
        guard let family = vendors.family(bindingNamed: name) else {
            let names = vendors.flatMap(\.bindingNames)
            let expected = names.count < 2 ? names.first ?? "a vendor this service serves (it serves none)" : names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "")
            throw ServiceError(.notFound, code: "unknown-reference", pointer: "", expected: expected, found: JSONWriter.quoted(name))
        }
        return (family, name)
    }
}
