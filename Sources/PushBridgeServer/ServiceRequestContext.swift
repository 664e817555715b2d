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

    /// Tells the connection that the route reads the body now: a client that sent
    /// `Expect: 100-continue` gets `100 Continue` (once; nothing when it did not ask).
    func continueReadingBody() {
        channel.triggerUserOutboundEvent(HTTPFramingHandler.SendContinue(), promise: nil)
    }
}
