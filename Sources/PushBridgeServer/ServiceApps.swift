import Foundation
import Logging
import NIOPosix
import PushBridgeCore
import PushBridgeDialects
import PushBridgeFacade
import PushBridgeStore

/// The service's apps: the directory of ids and key hashes, and each app's store, opened on first use.
final class ServiceApps: @unchecked Sendable {
    /// Who a request's key says the caller is, for one app.
    enum Access: Equatable {
        case granted
        /// No key, or a key of no app (401).
        case unauthenticated
        /// A valid key, but not this app's (403).
        case forbidden
    }

    let configuration: ServiceConfiguration
    /// Where the apps are kept (built by the executable, or a test's twin).
    let storage: any ServiceStorage
    let directory: any AppDirectory
    let registry: DialectRegistry
    let metrics: ServiceMetrics
    let logger: Logger
    private let lock = NSLock()
    private var known: [String: RegisteredApp] = [:]
    /// The open apps (at most ``ServiceConfiguration/maxOpenApps`` once the idle ones are closed).
    private var tenants: [String: AppTenant] = [:]
    /// The apps being opened: every request for one awaits the same opening (single flight).
    private var opening: [String: Task<AppTenant, any Error>] = [:]
    /// Tenants being closed (their writer finishing, their worker stopping): `close()` awaits them.
    private var closing: [UInt64: Task<Void, Never>] = [:]
    private var closings: UInt64 = 0
    /// Where the directory's changes (create, bind, unbind) run, one at a time and in order, off the
    /// event loops and the request tasks; a request's access check never waits for it.
    private let directoryWrites = DispatchQueue(label: "pushbridge-app-directory")
    private var bindings: [VendorBinding.Vendor: [String: VendorBinding]] = [:]
    private var messageCounter: UInt64 = 0
    /// UserSigs that verified, until they expire (Tencent REST).
    let verifiedSignatures = VerifiedSignatures()
    /// Easemob app tokens that checked, until they expire.
    let checkedTokens = VerifiedSignatures()
    private var closed = false
    /// When the shared directory was last re-read (PostgreSQL).
    private var lastReload = Date.distantPast
    /// Delivery to APNs, when configured.
    let delivery: ServiceDelivery?

    /// Opens the directory and, when delivery is configured, reads its credentials.
    /// - Parameters:
    ///   - configuration: the service's settings.
    ///   - storage: where the apps are kept.
    ///   - registry: the dialects.
    ///   - metrics: the service's metrics.
    ///   - logger: the service's log.
    init(configuration: ServiceConfiguration, storage: any ServiceStorage, registry: DialectRegistry = .standard, metrics: ServiceMetrics, logger: Logger) throws {
        delivery = try configuration.delivery.map { try ServiceDelivery(settings: $0, releasesClaimsAtStart: !storage.isShared, metrics: metrics, logger: logger) }
        self.configuration = configuration
        self.storage = storage
        self.registry = registry
        self.metrics = metrics
        self.logger = logger
        directory = try storage.openDirectory()
        do {
            for app in try directory.apps() { known[app.id] = app }
            for binding in try directory.vendorBindings() { bindings[binding.vendor, default: [:]][binding.key] = binding }
        } catch let error as StoreError where error.code == .unreachable {
            // A node may start while its database is down: the apps are read on the first miss after.
            logger.warning("the app directory is unreachable; starting without it", metadata: ["error": "\(error)"])
        }
    }

    /// The binding the vendor's requests name (`org/app`, or the SDKAppID).
    func binding(_ vendor: VendorBinding.Vendor, key: String) async -> VendorBinding? {
        if let found = lock.withLock({ bindings[vendor]?[key] }) { return found }
        await refreshShared()
        return lock.withLock { bindings[vendor]?[key] }
    }

    /// On a shared directory (PostgreSQL), re-reads the apps and bindings another node may have
    /// changed: called on a miss, at most once a second. The reads run on the blocking-I/O pool
    /// with no lock held (each statement has its deadline); only the merge takes `lock`.
    private func refreshShared() async {
        guard storage.isShared else { return }
        let due = lock.withLock {
            guard Date().timeIntervalSince(lastReload) >= 1 else { return false }
            lastReload = Date()
            return true
        }
        guard due else { return }
        do {
            let directory = directory
            let (apps, fresh) = try await NIOThreadPool.singleton.runIfActive {
                var fresh: [VendorBinding.Vendor: [String: VendorBinding]] = [:]
                for binding in try directory.vendorBindings() { fresh[binding.vendor, default: [:]][binding.key] = binding }
                return (try directory.apps(), fresh)
            }
            lock.withLock {
                for app in apps { known[app.id] = app }
                bindings = fresh
                directoryReachable = true
            }
        } catch {
            lock.withLock { directoryReachable = false }
            logger.warning("reading the shared app directory failed", metadata: ["error": "\(error)"])
        }
    }

    /// On a shared directory (PostgreSQL), reads the one app this node does not know (another node
    /// may have just created it): on every miss, one row by its key, on the blocking-I/O pool with no
    /// lock held. A request for an app created on another node a moment ago is served at once.
    /// - Returns: whether the app is known now; `nil` when the directory could not be read.
    private func lookUpShared(_ id: String) async -> Bool? {
        guard storage.isShared else { return lock.withLock { known[id] != nil } }
        do {
            let directory = directory
            let found = try await NIOThreadPool.singleton.runIfActive { try directory.app(id) }
            return lock.withLock {
                directoryReachable = true
                if let found { known[id] = found }
                return known[id] != nil
            }
        } catch {
            lock.withLock { directoryReachable = false }
            logger.warning("reading the shared app directory failed", metadata: ["error": "\(error)"])
            return nil
        }
    }

    /// Whether the last read of the shared directory worked.
    private var directoryReachable = true

    /// An app's vendor bindings.
    func bindings(of app: String) -> [VendorBinding] {
        lock.withLock { VendorBinding.Vendor.allCases.compactMap { vendor in bindings[vendor]?.values.first { $0.app == app } } }
    }

    /// Runs a change of the directory on its serial queue: changes apply one at a time, in order,
    /// and no request task or lock waits on the database meanwhile.
    private func changingDirectory<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            directoryWrites.async { continuation.resume(with: Result(catching: body)) }
        }
    }

    /// Binds vendor credentials to an app (replacing its earlier binding for the vendor).
    /// - Returns: `false` when another app holds the key.
    func bind(_ binding: VendorBinding) async throws -> Bool {
        try await changingDirectory { [self] in
            guard isOpen else { throw ServiceError.stopping }
            guard try directory.bind(binding) else { return false }
            lock.withLock {
                bindings[binding.vendor] = (bindings[binding.vendor] ?? [:]).filter { $0.value.app != binding.app }
                bindings[binding.vendor, default: [:]][binding.key] = binding
            }
            return true
        }
    }

    /// Removes an app's binding for a vendor.
    func unbind(app: String, vendor: VendorBinding.Vendor) async throws -> Bool {
        try await changingDirectory { [self] in
            guard isOpen else { throw ServiceError.stopping }
            guard try directory.unbind(app: app, vendor: vendor) else { return false }
            lock.withLock { bindings[vendor] = bindings[vendor]?.filter { $0.value.app != app } }
            return true
        }
    }

    /// A new message id for a vendor send that carries none: Easemob's form, digits — the
    /// millisecond and a counter, unique within this process.
    func newMessageID(_ now: Instant) -> String {
        let n = lock.withLock {
            messageCounter &+= 1
            return messageCounter % 1_000_000
        }
        let suffix = String(n)
        return String(now.milliseconds) + String(repeating: "0", count: 6 - suffix.count) + suffix
    }

    /// Whether the app exists.
    /// - Throws: ``ServiceError/storeUnavailable`` when this node does not know the app and the shared
    ///   directory cannot be read (it may exist: the answer is 503, not 404).
    func exists(_ id: String) async throws -> Bool {
        if lock.withLock({ known[id] != nil }) { return true }
        guard let known = await lookUpShared(id) else { throw ServiceError.storeUnavailable }
        return known
    }

    /// Whether the service's stores answer (`/readyz`): the shared directory on PostgreSQL; files always.
    func storeIsReachable() -> Bool { storage.isReachable() }

    /// The storage's connections to its database server (`/metrics`), when it has any.
    func storageConnections() -> StorageConnections? { storage.connections() }

    /// What a bearer key may do on an app.
    func access(to id: String, key: String?) async -> Access {
        guard let key, !key.isEmpty else { return .unauthenticated }
        let hash = AccessKey.hash(key)
        let granted = { self.lock.withLock { self.known[id].map { AccessKey.matches($0.keyHash, hash) } ?? false } }
        if granted() { return .granted }
        if lock.withLock({ known[id] == nil }), await lookUpShared(id) == true, granted() { return .granted }
        await refreshShared()
        return lock.withLock {
            if let app = known[id], AccessKey.matches(app.keyHash, hash) { return .granted }
            if known.values.contains(where: { AccessKey.matches($0.keyHash, hash) }) { return .forbidden }
            if let admin = configuration.adminKeyHash, AccessKey.matches(admin, hash) { return .forbidden }
            return .unauthenticated
        }
    }

    /// Whether a key is the admin key.
    func isAdmin(_ key: String?) -> Bool {
        guard let key, let admin = configuration.adminKeyHash else { return false }
        return AccessKey.matches(admin, AccessKey.hash(key))
    }

    /// Registers a new app and returns its key (shown this once).
    /// - Returns: `nil` when the id is taken.
    func create(_ id: String) async throws -> String? {
        let key = AccessKey.generate()
        let app = RegisteredApp(id: id, keyHash: AccessKey.hash(key), createdAt: .now)
        return try await changingDirectory { [self] in
            guard isOpen else { throw ServiceError.stopping }
            guard lock.withLock({ known[id] == nil }), try directory.register(app) else { return nil }
            lock.withLock { known[id] = app }
            return key
        }
    }

    /// The app's tenant, opening its store on first use. The store opens off the request's task, on
    /// the blocking-I/O pool and outside every lock (a database that does not answer holds up only
    /// the requests for this app, each at most its deadline), and once: requests for an app being
    /// opened await that opening. Opening one more app than ``ServiceConfiguration/maxOpenApps``
    /// closes the least recently used idle ones.
    /// - Parameters:
    ///   - id: the app.
    ///   - asked: whether a request asks for it (`false`: opened to deliver what its outbox holds,
    ///     it may be closed as soon as its worker finds nothing to do).
    func tenant(_ id: String, asked: Bool = true) async throws -> AppTenant {
        enum Found { case open(AppTenant), opening(Task<AppTenant, any Error>) }
        let found: Found = try lock.withLock {
            guard !closed else { throw ServiceError.stopping }
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

    /// Opens an app's store on the blocking-I/O pool and enters it in the registry.
    private func open(_ id: String, asked: Bool) async throws -> AppTenant {
        let tenant: AppTenant
        do {
            tenant = try await NIOThreadPool.singleton.runIfActive { try self.makeTenant(id) }
        } catch {
            lock.withLock { opening[id] = nil }
            throw error
        }
        if asked { tenant.used() }
        let entered = lock.withLock {
            opening[id] = nil
            guard !closed else { return false }
            tenants[id] = tenant
            return true
        }
        guard entered else {
            await tenant.writer.stop()
            throw ServiceError.stopping
        }
        delivery?.start(tenant)
        closeLeastRecentlyUsed()
        metrics.appsOpen(openApps)
        return tenant
    }

    /// Makes an app's tenant: opens its store, and the writer that commits to it.
    private func makeTenant(_ id: String) throws -> AppTenant {
        let store = try storage.openStore(forApp: id)
        let metrics = metrics
        let facade = PushFacade(
            store: store, registry: registry, repeatWindowSeconds: configuration.repeatWindowSeconds, queuesDeliveries: delivery != nil)
        let writer = GroupCommitWriter(
            store: store, sendBatch: { try facade.writing(to: $0).send($1) }, maxBatch: configuration.groupCommitMaxBatch, maxWaitMicroseconds: configuration.groupCommitWaitMicroseconds,
            timeout: .milliseconds(Int64(configuration.requestTimeoutSeconds * 1000)), answersByDeadline: storage.isShared,
            name: "pushbridge-writer-\(id)",
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
            guard excess > 0, !closed else { return [] }
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
        let ids = lock.withLock { Array(known.keys) }
        for id in ids.sorted() {
            do { _ = try await tenant(id, asked: false) } catch { logger.error("cannot open app", metadata: ["app": "\(id)", "error": "\(error)"]) }
        }
    }

    /// Finishes every app's queued writes and closes the stores; later writes get 503.
    func close() async {
        let (open, closingNow) = lock.withLock {
            closed = true
            return (Array(tenants.values), Array(closing.values))
        }
        for task in closingNow { await task.value }
        for tenant in open { await tenant.writer.stop() }
        lock.withLock { tenants.removeAll() }
        logger.info("stores closed", metadata: ["apps": "\(open.count)"])
    }

    /// Whether the service takes requests.
    var isOpen: Bool { lock.withLock { !closed } }
}

extension Instant {
    /// The current time, to the millisecond.
    static var now: Instant { Instant(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }
}

/// Credentials that verified (Tencent UserSigs, Easemob app tokens): the text, for whom and which
/// binding, and until when. Bounded (emptied when full); a changed binding (a new secret) no longer
/// matches its entries.
final class VerifiedSignatures: @unchecked Sendable {
    private struct Entry {
        var key: String
        var boundAt: Instant
        var identifier: String
        var expiresAt: Int64
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    static let capacity = 1_024

    /// Whether `sig` verified for this binding and identifier and has not expired at `now` (seconds).
    func isValid(_ sig: String, binding: VendorBinding, identifier: String, now: Int64) -> Bool {
        lock.withLock {
            guard let entry = entries[sig] else { return false }
            return entry.key == binding.key && entry.boundAt == binding.boundAt && entry.identifier == identifier && now < entry.expiresAt
        }
    }

    /// Whether an app token checked for this binding and has not expired at `now`.
    func isValid(_ token: String, binding: VendorBinding, now: Instant) -> Bool {
        isValid(token, binding: binding, identifier: "", now: now.milliseconds)
    }

    /// Remembers a checked app token.
    func remember(_ token: String, binding: VendorBinding, expiresAt: Instant) {
        remember(token, binding: binding, identifier: "", expiresAt: expiresAt.milliseconds)
    }

    /// Remembers a verified signature.
    func remember(_ sig: String, binding: VendorBinding, identifier: String, expiresAt: Int64) {
        lock.withLock {
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[sig] = Entry(key: binding.key, boundAt: binding.boundAt, identifier: identifier, expiresAt: expiresAt)
        }
    }
}
