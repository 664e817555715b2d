import Foundation
import Logging
import NIOPosix
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeStore
import Synchronization

/// The service's apps, by concern: the apps and keys this node knows (``KnownApps``), the vendor
/// bindings (``VendorBindings``), the credentials that verified (``VerifiedSignatures``), vendor
/// message ids (``VendorMessageIDs``) — and here, the open apps: each app's store and writer, opened
/// on first use (once, off the request path) and closed when idle past the open-app limit.
package final class ServiceApps: @unchecked Sendable {
    let configuration: ServiceConfiguration
    /// Where the apps are kept (built by the executable, or a test's twin).
    let storage: any ServiceStorage
    let registry: DialectRegistry
    let metrics: ServiceMetrics
    let logger: Logger
    /// The apps and their keys.
    let known: KnownApps
    /// The vendor credentials bound to the apps.
    let vendorBindings: VendorBindings
    /// Ids for vendor sends that carry none.
    let messageIDs = VendorMessageIDs()
    /// The queues every app's writer runs its rounds on (a few, shared: busy apps cost no thread each).
    let writerQueues = WriterQueues()
    /// Signatures made for an account that verified, until they expire (a vendor family's request signatures).
    package let verifiedSignatures = VerifiedSignatures()
    /// Bearer tokens that checked, until they expire (a vendor family's app tokens).
    package let checkedTokens = VerifiedSignatures()
    private let lock = NSLock()
    /// The open apps (at most ``ServiceConfiguration/maxOpenApps`` once the idle ones are closed).
    private var tenants: [String: AppTenant] = [:]
    /// The apps being opened: every request for one awaits the same opening (single flight).
    private var opening: [String: Task<AppTenant, any Error>] = [:]
    /// Tenants being closed (their writer finishing, their worker stopping): `close()` awaits them.
    private var closing: [UInt64: Task<Void, Never>] = [:]
    private var closings: UInt64 = 0
    /// Set once the service closes: no app opens and the directory takes no change after. Set
    /// before ``close()`` takes the lock, so an opening that saw it unset has entered its tenant by
    /// the time `close()` looks.
    private let closed = ClosedFlag()
    /// Delivery to APNs, when configured.
    let delivery: ServiceDelivery?
    /// The apps' push tasks.
    let campaigns: ServiceCampaigns

    /// Opens the directory and, when delivery is configured, reads its credentials.
    /// - Parameters:
    ///   - configuration: the service's settings.
    ///   - storage: where the apps are kept.
    ///   - registry: the dialects.
    ///   - metrics: the service's metrics.
    ///   - logger: the service's log.
    ///   - vendors: the vendor REST families (push tasks store their bodies).
    init(
        configuration: ServiceConfiguration, storage: any ServiceStorage, registry: DialectRegistry = .standard, metrics: ServiceMetrics, logger: Logger,
        vendors: [VendorRESTFamily] = []
    ) throws {
        delivery = try configuration.delivery.map { try ServiceDelivery(settings: $0, releasesClaimsAtStart: !storage.isShared, metrics: metrics, logger: logger) }
        campaigns = ServiceCampaigns(
            families: vendors, startsAtOpen: !storage.isShared, settings: TaskRunner.Settings(
                pageSize: configuration.pushTaskPageSize, receiversPerSecond: configuration.pushTaskRate,
                // Shared storage: another node may make a task, or die running one.
                idleMilliseconds: storage.isShared ? 5_000 : 60_000), metrics: metrics,
            logger: logger)
        self.configuration = configuration
        self.storage = storage
        self.registry = registry
        self.metrics = metrics
        self.logger = logger
        let directory = try storage.openDirectory()
        let changes = DirectoryChanges(isOpen: { [closed] in !closed.isClosed })
        known = try KnownApps(directory: directory, isShared: storage.isShared, adminKeyHash: configuration.adminKeyHash, changes: changes, logger: logger)
        vendorBindings = try VendorBindings(directory: directory, isShared: storage.isShared, changes: changes, logger: logger)
    }

    // The routes' entry points, by concern.

    /// The binding the vendor's requests name (`org/app`, or the SDKAppID).
    package func binding(_ vendor: VendorBinding.Vendor, key: String) async -> VendorBinding? { await vendorBindings.binding(vendor, key: key) }
    /// An app's vendor bindings.
    func bindings(of app: String) -> [VendorBinding] { vendorBindings.bindings(of: app) }
    /// Binds vendor credentials to an app; `false` when another app holds the key.
    func bind(_ binding: VendorBinding) async throws -> Bool { try await vendorBindings.bind(binding) }
    /// Removes an app's binding for a vendor; `false` when it had none.
    func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool { try await vendorBindings.unbind(app: app, vendor: vendor) }
    /// A new message id for a vendor send that carries none.
    func newMessageID(_ now: Instant) -> String { messageIDs.next(now) }
    /// Whether the app exists (503 when a shared directory cannot say).
    func exists(_ id: String) async throws -> Bool { try await known.exists(id) }
    /// What a bearer key may do on an app.
    func access(to id: String, key: String?) async -> KnownApps.Access { await known.access(to: id, key: key) }
    /// Whether a key is the admin key.
    func isAdmin(_ key: String?) -> Bool { known.isAdmin(key) }
    /// Registers a new app and returns its key; `nil` when the id is taken.
    func create(_ id: String) async throws -> String? { try await known.create(id) }

    /// Whether the service's stores answer (`/readyz`): the shared directory on PostgreSQL; files always.
    func storeIsReachable() async -> Bool { await storage.isReachable() }

    /// The storage's connections to its database server (`/metrics`), when it has any.
    func storageConnections() -> StorageConnections? { storage.connections() }

    /// The app's tenant, opening its store on first use. The store opens off the request's task, on
    /// the blocking-I/O pool and outside every lock (a database that does not answer holds up only
    /// the requests for this app, each at most its deadline), and once: requests for an app being
    /// opened await that opening. Opening one more app than ``ServiceConfiguration/maxOpenApps``
    /// closes the least recently used idle ones.
    /// - Parameters:
    ///   - id: the app.
    ///   - asked: whether a request asks for it (`false`: opened to deliver what its outbox holds,
    ///     it may be closed as soon as its worker finds nothing to do).
    package func tenant(_ id: String, asked: Bool = true) async throws -> AppTenant {
        enum Found { case open(AppTenant), opening(Task<AppTenant, any Error>) }
        let found: Found = try lock.withLock {
            guard !closed.isClosed else { throw ServiceError.stopping }
            if let tenant = tenants[id] {
                if asked { tenant.used() }
                return .open(tenant)
            }
            if let task = opening[id] { return .opening(task) }
            let task = Task { try await self.open(id, asked: asked) }
            opening[id] = task
            return .opening(task)
        }
        switch found {
        case .open(let tenant): return tenant
        case .opening(let task): return try await task.value
        }
    }

    /// Opens an app's store (awaited on a shared storage; a storage of files opens it on the
    /// blocking-I/O pool) and enters it in the registry.
    private func open(_ id: String, asked: Bool) async throws -> AppTenant {
        let tenant: AppTenant
        do {
            tenant = try await makeTenant(id)
        } catch {
            lock.withLock { opening[id] = nil }
            throw error
        }
        if asked { tenant.used() }
        let entered = lock.withLock {
            opening[id] = nil
            guard !closed.isClosed else { return false }
            tenants[id] = tenant
            return true
        }
        guard entered else {
            await tenant.writer.stop()
            throw ServiceError.stopping
        }
        delivery?.start(tenant)
        campaigns.start(tenant)
        closeLeastRecentlyUsed()
        metrics.appsOpen(openApps)
        return tenant
    }

    /// Makes an app's tenant: opens its store, and the writer that commits to it.
    private func makeTenant(_ id: String) async throws -> AppTenant {
        let storage = storage
        let store = storage.isShared
            ? try await storage.openStoreAwaited(forApp: id) : try await NIOThreadPool.singleton.runIfActive { try storage.openStore(forApp: id) }
        let metrics = metrics
        let facade = PushFacade(
            store: store, registry: registry, repeatWindowSeconds: configuration.repeatWindowSeconds, queuesDeliveries: delivery != nil)
        let writer = GroupCommitWriter(
            facade: facade, maxBatch: configuration.groupCommitMaxBatch, maxWaitMicroseconds: configuration.groupCommitWaitMicroseconds,
            timeout: .milliseconds(Int64(configuration.requestTimeoutSeconds * 1000)), answersByDeadline: storage.isShared,
            rounds: writerQueues.next(), name: "pushbridge-writer-\(id)",
            observer: .init(
                committed: { batch, waiting in metrics.committed(app: id, batch: batch, waiting: waiting) },
                failed: { [logger] error in logger.error("group commit failed", metadata: ["app": "\(id)", "error": "\(error)"]) }))
        var afterWrite: (@Sendable () -> Void)? = nil
        if let delivery { afterWrite = { delivery.wake(id) } }
        return AppTenant(id: id, facade: facade, writer: writer, afterWrite: afterWrite) { [weak self] in
            guard let self else { throw ServiceError.stopping }
            return try await tenant(id)
        }
    }

    /// How many apps are open now.
    var openApps: Int { lock.withLock { tenants.count } }

    /// Closes the least recently used tenants that nobody is using while more than
    /// ``ServiceConfiguration/maxOpenApps`` are open; an app whose outbox holds deliveries stays
    /// open (its worker delivers them), and state in memory is never closed (it would be lost).
    /// Called after each opening, and every second by ``sweep()``.
    func closeLeastRecentlyUsed() {
        guard !storage.isVolatile else { return }
        let delivering = delivery != nil
        // A tenant opened or asked for within the last second stays: the request that opened it is
        // served by it, however busy the other apps are (no closing and opening again in a loop).
        let cutoff = ContinuousClock.now - .seconds(1)
        let retired: [AppTenant] = lock.withLock {
            let excess = tenants.count - configuration.maxOpenApps
            guard excess > 0, !closed.isClosed else { return [] }
            var retired: [AppTenant] = []
            // Never asked for (opened to deliver) first, then the least recently used.
            let byUse = tenants.values.map { ($0, $0.lastUsedAt) }.sorted { a, b in
                guard let later = b.1 else { return false }
                return a.1.map { $0 < later } ?? true
            }
            for (tenant, _) in byUse where retired.count < excess {
                if tenant.retireIfIdle(delivering: delivering, unusedSince: cutoff) {
                    tenants[tenant.id] = nil
                    retired.append(tenant)
                }
            }
            return retired
        }
        guard !retired.isEmpty else { return }
        lock.withLock {
            closings &+= 1
            let key = closings
            closing[key] = Task { [delivery, metrics, logger] in
                for tenant in retired {
                    await self.campaigns.stop(tenant)
                    await delivery?.stop(tenant)
                    await tenant.writer.stop()
                }
                metrics.appsClosed(retired.count)
                metrics.appsOpen(self.openApps)
                logger.debug("idle apps closed", metadata: ["apps": "\(retired.map(\.id).joined(separator: ", "))"])
                _ = self.lock.withLock { self.closing.removeValue(forKey: key) }
            }
        }
    }

    /// Reads a shared directory (apps and vendor bindings), awaited: when the service starts.
    func loadDirectory() async {
        await known.load()
        await vendorBindings.load()
    }

    /// Closes idle apps past the limit once a second until the service closes (an app kept open
    /// while its worker had deliveries to make is closed once they are made).
    func sweep() async {
        while isOpen && !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            closeLeastRecentlyUsed()
        }
    }

    /// Opens every known app's store, so that its delivery worker finishes what was queued before
    /// a restart (those with empty outboxes are closed again past the open-app limit).
    func openAll() async {
        let ids = known.ids
        for id in ids.sorted() {
            do { _ = try await tenant(id, asked: false) } catch { logger.error("cannot open app", metadata: ["app": "\(id)", "error": "\(error)"]) }
        }
    }

    /// Finishes every app's queued writes and closes the stores; later writes get 503.
    func close() async {
        closed.close()
        await campaigns.stopAll()
        let (open, closingNow) = lock.withLock { (Array(tenants.values), Array(closing.values)) }
        for task in closingNow { await task.value }
        for tenant in open { await tenant.writer.stop() }
        lock.withLock { tenants.removeAll() }
        logger.info("stores closed", metadata: ["apps": "\(open.count)"])
    }

    /// Whether the service takes requests.
    var isOpen: Bool { !closed.isClosed }
}

extension Instant {
    /// The current time, to the millisecond.
    package static var now: Instant { Instant(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }
}


/// Whether the service has closed: read under the registry's lock and off it (the directory's changes).
final class ClosedFlag: Sendable {
    private let closed = Mutex(false)
    var isClosed: Bool { closed.withLock { $0 } }
    func close() { closed.withLock { $0 = true } }
}
