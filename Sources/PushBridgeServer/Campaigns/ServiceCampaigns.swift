import Logging
import PushBridgeStore
import Synchronization

/// The service's push tasks: one ``TaskRunner`` per open app, started when the app's store opens
/// (so a task left by a restart resumes there) and stopped when the registry closes the app or the
/// service stops. Runs whether or not the service delivers: without delivery, a task's pushes are
/// decided and recorded, as every send's are.
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
    private let running = Mutex<(byTenant: [ObjectIdentifier: Running], byApp: [String: TaskRunner], stopped: Bool)>(([:], [:], false))

    /// - Parameters:
    ///   - families: the vendor REST families, whose bodies tasks store.
    ///   - settings: the runners' page size and outbox budget.
    init(families: [VendorRESTFamily], settings: TaskRunner.Settings, metrics: ServiceMetrics, logger: Logger) {
        self.families = Dictionary(families.map { ($0.rest.kind.rawValue, $0.rest) }, uniquingKeysWith: { first, _ in first })
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
    }

    /// Starts the runner of an app whose store just opened.
    func start(_ tenant: AppTenant) {
        let runner = TaskRunner(tenant: tenant, families: families, settings: settings, metrics: metrics, logger: logger)
        running.withLock { running in
            guard !running.stopped, running.byTenant[ObjectIdentifier(tenant)] == nil else { return }
            running.byTenant[ObjectIdentifier(tenant)] = Running(runner: runner, task: Task { await runner.run() })
            running.byApp[tenant.id] = runner
        }
    }

    /// Stops a tenant's runner (the tenant is being closed) and returns once it has ended.
    func stop(_ tenant: AppTenant) async {
        let stopped: Running? = running.withLock { running in
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
            defer { running.byTenant = [:]; running.byApp = [:] }
            return Array(running.byTenant.values)
        }
        for each in all { each.runner.stop() }
        for each in all { await each.task.value }
    }

    /// Has an app's runner look at its tasks now.
    func wake(_ app: String) {
        running.withLock { $0.byApp[app] }?.wake()
    }
}
