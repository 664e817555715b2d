import Hummingbird
import PushBridgeStore
import Logging
import NIOCore
import ServiceLifecycle

/// `pushbridge serve` as a value tests and the command line both build: the Hummingbird
/// application with the native API, the apps' stores, and their orderly close.
public struct PushBridgeService: Sendable {
    public let configuration: ServiceConfiguration
    public let metrics: ServiceMetrics
    /// The vendor REST families it serves beside the native API.
    public let vendors: [VendorRESTFamily]
    let apps: ServiceApps
    let logger: Logger

    /// Opens the app directory of the storage (app stores open on first use).
    /// - Parameters:
    ///   - configuration: the service's settings.
    ///   - storage: where the apps are kept; `nil`: SQLite files or memory, as the configuration
    ///     says (a store over the network is built by the executable from its backends,
    ///     ``ServiceConfiguration/storage(from:)``, and handed here). A test can hand a twin.
    ///   - vendors: the vendor REST families it serves (`[.easemob, .tencent]` from the vendor modules);
    ///     none: the native API only.
    ///   - logger: where log lines go; by default ``ServiceLogHandler`` on standard error at the configured level.
    /// - Throws: a store error when the data directory cannot be opened.
    public init(configuration: ServiceConfiguration, storage: (any ServiceStorage)? = nil, vendors: [VendorRESTFamily], logger: Logger? = nil) throws {
        var logger = logger ?? Logger(label: "pushbridge") { ServiceLogHandler(label: $0, level: configuration.logLevel) }
        logger.logLevel = configuration.logLevel
        self.configuration = configuration
        self.vendors = vendors
        self.logger = logger
        metrics = ServiceMetrics()
        apps = try ServiceApps(configuration: configuration, storage: storage ?? configuration.storage(from: []), metrics: metrics, logger: logger, vendors: vendors)
    }

    /// The router with every route of Specification §11, the vendors' routes (and the error body for what matches none).
    public func router() -> Router<ServiceRequestContext> {
        let router = Router(context: ServiceRequestContext.self)
        let table = RouteTable()
        router.add(middleware: ServiceMiddleware(metrics: metrics, logger: logger, routes: table, vendors: vendors, apps: apps))
        ServiceRoutes(apps: apps, configuration: configuration, metrics: metrics, logger: logger, vendors: vendors)
            .register(on: RecordingRouter(router: router, table: table))
        return router
    }

    /// The application: HTTP/1.1 with the configured idle timeout, and a service that closes the
    /// stores after the server has finished its requests (SIGTERM: stop accepting, finish, close).
    /// - Parameter onServerRunning: called with the listening channel (its local address holds the port).
    public func application(onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }) -> some ApplicationProtocol {
        let timeout = TimeAmount.nanoseconds(Int64(configuration.requestTimeoutSeconds * 1_000_000_000))
        let (metrics, logger) = (metrics, logger)
        let refused: @Sendable (String) -> Void = { error in
            metrics.request(method: "unparsed", route: "unparsed", status: 400, duration: .zero)
            logger.info("request refused by the HTTP parser", metadata: ["status": "400", "error": "\(error)"])
        }
        return Application(
            router: router(),
            server: .http1(configuration: .init(additionalChannelHandlers: [HTTPFramingHandler(bodyLimitBytes: configuration.bodyLimitBytes, refused: refused)], idleTimeout: timeout)),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "PushBridge"),
            services: [StorageConnectionsRunner(storage: apps.storage), StoreCloser(apps: apps)],
            onServerRunning: onServerRunning,
            logger: logger)
    }

    /// Stops delivering and closes the stores (finishing queued writes); for a service that is not
    /// run as an application.
    public func close() async {
        await apps.delivery?.finishAndWait()
        await apps.close()
    }
}

/// The storage's connections to its database server as a service: started before the stores'
/// service, so they stop after it (services stop in reverse order) and the stores finish their
/// writes on them.
struct StorageConnectionsRunner: Service {
    let storage: any ServiceStorage

    func run() async throws {
        await storage.run()
        try? await gracefulShutdown()
    }
}

/// The apps' runtime as a service: the delivery workers (child tasks of the delivery's run), every
/// app with a queue left from before opened (with delivery), idle apps past the limit closed each
/// second; at the graceful shutdown — which comes after the server has stopped (services stop in
/// reverse order) — it stops delivering, finishes the queued writes and closes the stores.
struct StoreCloser: Service {
    let apps: ServiceApps

    func run() async throws {
        await withTaskGroup(of: Void.self) { group in
            if let delivery = apps.delivery { group.addTask { await delivery.run() } }
            group.addTask { await apps.sweep() }
            await apps.loadDirectory()
            // Every app with a queue left from before resumes delivering now.
            if apps.delivery != nil { await apps.openAll() }
            try? await gracefulShutdown()
            apps.delivery?.finish()
            group.cancelAll()
        }
        await apps.close()
    }
}
