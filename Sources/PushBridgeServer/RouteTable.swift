import HTTPTypes
import Hummingbird
import Synchronization

/// Every route the service registers, by path and method: what a path that exists answers to a
/// method it does not take (405 with `Allow`, RFC 9110 §15.5.6) instead of the router's 404.
///
/// Filled once while the routes are registered (``RecordingRouter``), read when the router finds
/// no route for a request.
final class RouteTable: Sendable {
    private struct Route: Sendable {
        var path: RouterPath
        var methods: [HTTPRequest.Method]
        /// One bit per segment, first segment highest: set where the segment is literal. Among
        /// paths that match a request, the router's trie takes literal segments before captures,
        /// leftmost first; the largest mask is that route.
        var literals: UInt64
    }

    private let routes = Mutex<[Route]>([])

    /// Records a route.
    func add(_ path: RouterPath, method: HTTPRequest.Method) {
        routes.withLock { routes in
            if let i = routes.firstIndex(where: { $0.path == path }) {
                if !routes[i].methods.contains(method) { routes[i].methods.append(method) }
                return
            }
            var literals: UInt64 = 0
            for (i, element) in path.components.prefix(64).enumerated() where Self.isLiteral(element) { literals |= 1 << UInt64(63 - i) }
            routes.append(Route(path: path, methods: [method], literals: literals))
        }
    }

    /// The methods a request path has routes for, in a fixed order (`nil`: no route has this path).
    /// - Parameter path: the request's path, without the query.
    func methods(for path: String) -> [HTTPRequest.Method]? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true)
        return routes.withLock { routes in
            var best: UInt64?
            var methods: [HTTPRequest.Method] = []
            for route in routes where Self.matches(route.path, segments) {
                if best == nil || route.literals > best! {
                    best = route.literals
                    methods = route.methods
                } else if route.literals == best! {
                    methods += route.methods.filter { !methods.contains($0) }
                }
            }
            guard best != nil else { return nil }
            return Self.ordered(methods)
        }
    }

    /// Every method some route takes, in the order of ``methods(for:)``.
    func allMethods() -> [HTTPRequest.Method] {
        let methods = routes.withLock { routes in routes.reduce(into: [HTTPRequest.Method]()) { all, route in all += route.methods.filter { !all.contains($0) } } }
        return Self.ordered(methods)
    }

    /// Methods in a fixed order: the common ones first, then the rest as given.
    private static func ordered(_ methods: [HTTPRequest.Method]) -> [HTTPRequest.Method] {
        let order: [HTTPRequest.Method] = [.get, .head, .post, .put, .patch, .delete, .options]
        return order.filter(methods.contains) + methods.filter { !order.contains($0) }
    }

    private static func isLiteral(_ element: RouterPath.Element) -> Bool {
        let text = element.description
        return !(text.contains("{") || text.contains("*"))
    }

    private static func matches(_ path: RouterPath, _ segments: [Substring]) -> Bool {
        var i = 0
        for element in path.components {
            if element.description == "**" { return true }
            guard i < segments.count, element ~= segments[i] else { return false }
            i += 1
        }
        return i == segments.count
    }
}

/// The router as the routes register on it: each route is added to the router and recorded in
/// the ``RouteTable``; a `GET` route answers `HEAD` too (RFC 9110 §9.3.2: the same status and
/// headers; the connection writes no body for a `HEAD`, ``HTTPFramingHandler``).
package struct RecordingRouter<Context: RequestContext>: RouterMethods {
    let router: Router<Context>
    let table: RouteTable

    @discardableResult
    package func on<Responder: HTTPResponder>(_ path: RouterPath, method: HTTPRequest.Method, responder: Responder) -> Self where Responder.Context == Context {
        router.on(path, method: method, responder: responder)
        table.add(path, method: method)
        if method == .get {
            router.on(path, method: .head, responder: responder)
            table.add(path, method: .head)
        }
        return self
    }

    @discardableResult
    package func add(middleware: any MiddlewareProtocol<Request, Response, Context>) -> Self {
        router.add(middleware: middleware)
        return self
    }
}
