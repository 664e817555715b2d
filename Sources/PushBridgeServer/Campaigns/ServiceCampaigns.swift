import Logging
import PushBridgeStore
import Synchronization

/// The service's push tasks: one ``TaskRunner`` per open app, stopped when the registry closes the app
/// or the service stops. On SQLite a runner starts when the app's store opens (so a task left by a
/// restart resumes there); on shared storage (PostgreSQL) when the node is first asked about the app's
/// tasks — a task made, listed or read through it — and it then looks every few seconds while the app
/// is open. Runs whether or not the service delivers: without delivery, a task's pushes are decided and
/// recorded, as every send's are.
final class ServiceCampaigns: Sendable {
    private struct Running: Sendable {
        var runner: TaskRunner
        var task: Task<Void, Never>
    }

    let families: [String: any VendorREST]
    let settings: TaskRunner.Settings
    let metrics: ServiceMetrics
    let logger: Logger
    /// The runners by tenant; the app's current one also by app (for ``wake(_:)``).
    private let running = Mutex<(byTenant: [ObjectIdentifier: Running], byApp: [String: TaskRunner], dormant: [String: AppTenant], stopped: Bool)>(
        ([:], [:], [:], false))
    /// Whether a runner starts with its app (`false`: when the app's tasks are first asked about).
    let startsAtOpen: Bool

    /// - Parameters:
    ///   - families: the vendor REST families, whose bodies tasks store.
    ///   - settings: the runners' page size and pace.
    init(families: [VendorRESTFamily], startsAtOpen: Bool = true, settings: TaskRunner.Settings, metrics: ServiceMetrics, logger: Logger) {
        self.startsAtOpen = startsAtOpen
        self.families = Dictionary(families.map { ($0.rest.kind.rawValue, $0.rest) }, uniquingKeysWith: { first, _ in first })
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Starts the runner of an app whose store just opened (or keeps the app for ``wake(_:)``).
    func start(_ tenant: AppTenant) {
        running.withLock { running in
            guard !running.stopped, running.byTenant[ObjectIdentifier(tenant)] == nil else { return }
            guard startsAtOpen else {
                running.dormant[tenant.id] = tenant
                return
            }
            launch(tenant, in: &running)
        }
    }

    private func launch(
        _ tenant: AppTenant, in running: inout (byTenant: [ObjectIdentifier: Running], byApp: [String: TaskRunner], dormant: [String: AppTenant], stopped: Bool)
    ) {
        let runner = TaskRunner(tenant: tenant, families: families, settings: settings, metrics: metrics, logger: logger)
        running.byTenant[ObjectIdentifier(tenant)] = Running(runner: runner, task: Task { await runner.run() })
        running.byApp[tenant.id] = runner
    }

    /// Stops a tenant's runner (the tenant is being closed) and returns once it has ended.
    func stop(_ tenant: AppTenant) async {
        let stopped: Running? = running.withLock { running in
            if running.dormant[tenant.id] === tenant { running.dormant[tenant.id] = nil }
            guard let found = running.byTenant.removeValue(forKey: ObjectIdentifier(tenant)) else { return nil }
            if running.byApp[tenant.id] === found.runner { running.byApp[tenant.id] = nil }
            return found
        }
        guard let stopped else { return }
        stopped.runner.stop()
        await stopped.task.value
    }

    /// Stops every runner and returns once they have ended; none starts after.
    func stopAll() async {
        let all = running.withLock { running in
            running.stopped = true
            defer { running.byTenant = [:]; running.byApp = [:]; running.dormant = [:] }
            return Array(running.byTenant.values)
        }
        for each in all { each.runner.stop() }
        for each in all { await each.task.value }
    }

    /// Has an app's runner look at its tasks now (starting it, if it waits to be asked).
    func wake(_ app: String) {
        let runner: TaskRunner? = running.withLock { running in
            if running.byApp[app] == nil, !running.stopped, let tenant = running.dormant.removeValue(forKey: app) { launch(tenant, in: &running) }
            return running.byApp[app]
        }
        runner?.wake()
    }
}
