import HTTPTypes
import Hummingbird
import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore
import PushBridgeVendorREST

/// A vendor's server REST that the service serves beside its native API (Specification §12, §14): the vendor's
/// routes at its own paths, the binding `/v1/apps/{app}/vendors/{name}` makes for it, and its answers to
/// the paths and methods it has no route for. A vendor module offers one (`VendorRESTFamily.easemob` in
/// `PushBridgeEasemob`, `.tencent` in `PushBridgeTencent`); the service is built with the list it serves
/// (``PushBridgeService/init(configuration:storage:vendors:logger:)``). The server names no vendor.
public struct VendorRESTFamily: Sendable {
    /// What the vendor module implements.
    package let rest: any VendorREST

    /// - Parameter rest: the vendor module's implementation.
    package init(_ rest: any VendorREST) {
        self.rest = rest
    }

    /// The `{vendor}` names it takes in `/v1/apps/{app}/vendors/{vendor}` (`easemob`, `agora`; `tencent`).
    public var bindingNames: [String] { rest.bindingNames }
}

/// What makes a push task's messages: a vendor family, from the request body its task stored, or
/// the native API's.
package protocol PushTaskFamily: Sendable {
    /// The messages a push task of this family sends to a page of its receivers: one per receiver,
    /// made from the request body the task stored (``PushBridgeStore/PushTask/request``).
    /// - Parameters:
    ///   - request: the stored body.
    ///   - users: the receivers.
    ///   - id: the message id of a receiver's push.
    /// - Throws: `InputError` for a body this family cannot read (it read it when the task was made).
    func taskMessages(request: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage]
}

/// What a vendor module implements for the service: everything that differs between vendors, in one place.
package protocol VendorREST: PushTaskFamily {
    /// The kind of binding it serves: what its bindings are stored and found under.
    var kind: VendorBinding.Vendor { get }

    /// The `{vendor}` names of `/v1/apps/{app}/vendors/{vendor}` that make or remove its binding.
    var bindingNames: [String] { get }

    /// The first path segment of its routes (`v4`), or `nil` for a family at `/{org}/{app}/…`: the paths
    /// whose first segment is neither the native API's nor another family's.
    var pathPrefix: String? { get }

    /// Where a binding whose key another app holds is refused: the body's pointer and what was expected.
    var conflict: (pointer: String, expected: String) { get }

    /// Reads a binding body (`PUT /v1/apps/{app}/vendors/{name}`).
    /// - Parameters:
    ///   - name: one of ``bindingNames``.
    ///   - body: the request body.
    ///   - app: the PushBridge app it binds.
    ///   - now: when it is bound.
    /// - Throws: `InputError` naming the body's pointer.
    func binding(named name: String, body: JSONValue, app: String, now: Instant) throws -> VendorBinding

    /// The name of ``bindingNames`` a stored binding answers under.
    func name(of binding: VendorBinding) -> String

    /// A binding as answers show it: never the secret.
    func describe(_ binding: VendorBinding) -> JSONValue

    /// Registers its routes.
    /// - Parameters:
    ///   - router: the service's router.
    ///   - routes: the service's request helpers and apps.
    func register(on router: RecordingRouter<ServiceRequestContext>, routes: ServiceRoutes)

    /// The answer, in the vendor's shape, to a method a path of its routes does not take (the service adds `Allow`).
    /// - Parameters:
    ///   - method: the request's method.
    ///   - expected: what was expected, naming the allowed methods.
    func methodNotAllowed(_ method: HTTPRequest.Method, expected: String) -> Response

    /// The answer, in the vendor's shape, to a path of its family no route has; `nil`: the native 404.
    /// - Parameters:
    ///   - segments: the request path's segments.
    ///   - what: the request's method and path, as a sentence.
    ///   - apps: the service's apps (whose bindings say whether the path is one of its apps').
    func unknownRoute(segments: [Substring], what: String, apps: ServiceApps) async -> Response?

}

extension VendorREST {
    /// A family that makes no push tasks.
    package func taskMessages(request: JSONValue, to users: [String], id: (String) -> String) throws -> [VendorMessage] {
        throw InputError(.invalidValue, at: .root, expected: "a push task of a family that makes them", found: kind.rawValue)
    }
}

/// A vendor route's refusal, already in the vendor's shape: the service's helpers pass it through untouched.
package protocol VendorRefusal: Error {}

extension [VendorRESTFamily] {
    /// The family a request path belongs to, by its first segment (`nil`: the native API's). A path a route
    /// of another family also matches (`/v1/x/token` and `/{org}/{app}/token`) is the prefix's: `v1` is no
    /// org a binding may take.
    /// - Parameter path: the request's path, without the query.
    func family(ofRequestPath path: String) -> (any VendorREST)? {
        let segment = path.split(separator: "/", omittingEmptySubsequences: true).first
        switch segment {
        case "v1"?, "healthz"?, "readyz"?, "metrics"?, nil: return nil
        case let segment?: return (first { $0.rest.pathPrefix == String(segment) } ?? first { $0.rest.pathPrefix == nil })?.rest
        }
    }

    /// The family whose binding a `{vendor}` name makes.
    func family(bindingNamed name: String) -> (any VendorREST)? {
        first { $0.rest.bindingNames.contains(name) }?.rest
    }

    /// The family of a stored binding.
    func family(of binding: VendorBinding) -> (any VendorREST)? {
        first { $0.rest.kind == binding.vendor }?.rest
    }

}
