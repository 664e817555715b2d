import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import PushBridgeJSON
import PushBridgeStore

/// Around every request: turns errors into the JSON error body, writes one log line (app, route,
/// status, duration) and counts the request. Never logs headers or bodies (keys stay out of logs).
struct ServiceMiddleware: RouterMiddleware {
    typealias Context = ServiceRequestContext
    let metrics: ServiceMetrics
    let logger: Logger
    /// Every route by path and method: a path that exists without the request's method is 405.
    let routes: RouteTable
    /// The vendor REST families: a path of theirs that no route has, or without the request's method, is
    /// answered in their shape.
    let vendors: [VendorRESTFamily]
    /// The apps, whose bindings a family's answer to an unknown path may read.
    let apps: ServiceApps

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as ServiceError {
            response = try error.response(from: request, context: context)
        } catch let error as HTTPError {
            if error.status == .notFound, let methods = routes.methods(for: request.uri.path) {
                response = Self.methodNotAllowed(request.method, allowed: methods, family: vendors.family(ofRequestPath: request.uri.path))
            } else if error.status == .notFound, let vendor = await unknownVendorRoute(request) {
                response = vendor
            } else {
                response = try Self.serviceError(for: error.status).response(from: request, context: context)
            }
        } catch let error as StoreError {
            // Opening an app's store or reading the directory (outside a route's own handling).
            logger.warning("store failure", metadata: ["error": "\(error)", "route": "\(context.endpointPath ?? "?")"])
            response = try ServiceError.store(error).response(from: request, context: context)
        } catch {
            // A parser error that reached here without a route turning it into an answer: the
            // client's bytes, not a server failure. (Store errors are answered by the routes.)
            if error is HTTPParserError, let refusal = ServiceError.reading(error) {
                response = try refusal.response(from: request, context: context)
            } else {
                logger.error("unexpected failure", metadata: ["error": "\(error)", "route": "\(context.endpointPath ?? "?")"])
                response = try ServiceError(.internalServerError, code: "internal", expected: "a request the service can answer (see its log)")
                    .response(from: request, context: context)
            }
        }
        if request.method == .connect {
            // Nothing here tunnels: 405 as for any method a route does not take (``HTTPFramingHandler``
            // writes its body and closes the connection). A `host:port` target, or a path no route
            // has, is native and allowed what the service serves anywhere.
            let path = request.uri.path
            let isPath = path.hasPrefix("/")
            response = Self.methodNotAllowed(
                .connect, allowed: (isPath ? routes.methods(for: path) : nil) ?? routes.allMethods(), family: isPath ? vendors.family(ofRequestPath: path) : nil)
        }
        let duration = ContinuousClock.now - start
        let route = context.endpointPath ?? "unmatched"
        metrics.request(method: request.method.rawValue, route: route, status: Int(response.status.code), duration: duration)
        if logger.logLevel <= .info {
            var metadata: Logger.Metadata = [
                "method": "\(request.method.rawValue)", "route": "\(route)", "status": "\(response.status.code)",
                "ms": "\(Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)",
            ]
            if let app = Self.app(of: request.uri.path) { metadata["app"] = "\(app)" }
            logger.info("request", metadata: metadata)
        }
        return response
    }

    /// The `{app}` of `/v1/apps/{app}/…`.
    static func app(of path: String) -> Substring? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 3, parts[0] == "v1", parts[1] == "apps" else { return nil }
        return parts[2]
    }

    /// The error body for what the router itself refuses.
    static func serviceError(for status: HTTPResponse.Status) -> ServiceError {
        switch status {
        case .notFound: return ServiceError(.notFound, code: "not-found", expected: "a route of the native API (the article Running the service lists them)")
        case .methodNotAllowed: return ServiceError(.methodNotAllowed, code: "method-not-allowed", expected: "a method this route takes")
        case .contentTooLarge: return ServiceError(.contentTooLarge, code: "too-large", expected: "a smaller body")
        default: return ServiceError(status, code: "http-\(status.code)", expected: status.reasonPhrase)
        }
    }

    /// 405 with `Allow` (RFC 9110 §15.5.6) in the error shape of the path's route family.
    /// - Parameters:
    ///   - method: the request's method.
    ///   - allowed: the methods the path's route takes.
    ///   - family: the vendor family of the path; `nil`: the native API's.
    static func methodNotAllowed(_ method: HTTPRequest.Method, allowed: [HTTPRequest.Method], family: (any VendorREST)?) -> Response {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        let expected = "a method this route takes (Allow: \(allow))"
        var response = family?.methodNotAllowed(method, expected: expected)
            ?? ServiceError(.methodNotAllowed, code: "method-not-allowed", expected: expected, found: JSONWriter.quoted(method.rawValue)).response()
        response.headers[.allow] = allow
        return response
    }

    /// A path of a vendor family that no route has, answered in that vendor's shape when the family
    /// answers it (``VendorREST/unknownRoute(segments:what:apps:)``); `nil` otherwise (the native 404).
    func unknownVendorRoute(_ request: Request) async -> Response? {
        let path = request.uri.path
        guard let family = vendors.family(ofRequestPath: path) else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        let what = "\(request.method.rawValue) \(path) is not a route PushBridge serves (the article Drop-in for vendor REST lists them)"
        return await family.unknownRoute(segments: segments, what: what, apps: apps)
    }
}
