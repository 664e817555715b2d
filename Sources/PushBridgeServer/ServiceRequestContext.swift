import Hummingbird
import NIOCore

/// A request's context in the service: Hummingbird's core context and the connection the request
/// came on, so that a route about to read a body can let a client waiting on
/// `Expect: 100-continue` send it (the connection then writes `100 Continue`).
public struct ServiceRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The request's connection.
    let channel: any Channel

    /// - Parameter source: the application's source of contexts (one per request).
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// Tells the connection that the route reads `request`'s body now: a client that sent
    /// `Expect: 100-continue` gets `100 Continue` (once). A request without `Expect` costs nothing
    /// (no event crosses to the connection's event loop).
    func continueReadingBody(of request: Request) {
        guard request.headers[.expect] != nil else { return }
        channel.triggerUserOutboundEvent(HTTPFramingHandler.SendContinue(), promise: nil)
    }
}
