import Foundation
import Metrics
import Prometheus
import PushBridgeStore

/// The service's Prometheus metrics (`GET /metrics`), through swift-metrics with a factory of the
/// service's own: no process-wide metrics system is bootstrapped, so several services (tests) keep
/// their figures apart.
///
/// - `pushbridge_http_requests_total{method,route,status}`
/// - `pushbridge_http_request_duration_seconds{route}` (histogram)
/// - `pushbridge_messages_total{dialect,repeat}`
/// - `pushbridge_decisions_total{dialect,outcome}`: `push`, or the reason a receiver was not pushed
/// - `pushbridge_group_commit_writes` (histogram): writes per commit
/// - `pushbridge_write_queue_depth{app}`: writes waiting for an app's writer
/// - `pushbridge_deliveries_total{outcome,reason}`: APNs attempts by outcome (`delivered`, `retried`,
///   `failed`, `device-removed`) and reason (`DeliveryReason`: APNs's reasons, transport kinds, `none`)
/// - `pushbridge_delivery_queue_depth{app}`: deliveries waiting in an app's outbox
/// - on PostgreSQL: `pushbridge_database_connections_open`, `pushbridge_database_connections_limit`
///   (`store-connections`), `pushbridge_database_statements_total` (each a round trip) and
///   `pushbridge_database_connections_exhausted_total` (uses answered 503 `busy`: no connection free in time)
public struct ServiceMetrics: Sendable {
    /// The registry `/metrics` prints.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    /// Handles already made, by name and labels: making one takes the registry's lock and builds its
    /// label set, which costs more than counting.
    private let handles = HandleCache()

    final class HandleCache: @unchecked Sendable {
        private let lock = NSLock()
        private var made: [String: AnyObject] = [:]

        /// The handle made for `key`, making it on first use.
        func handle<Handle: AnyObject>(_ key: String, _ make: () -> Handle) -> Handle {
            lock.withLock {
                if let existing = made[key] as? Handle { return existing }
                let handle = make()
                made[key] = handle
                return handle
            }
        }

        /// The storage's totals at the last scrape (``ServiceMetrics/storage(_:)``).
        private var storageTotals = (statements: 0, exhausted: 0)

        /// Keeps the storage's totals now and returns what was added since the last call.
        func storageIncrements(statements: Int, exhausted: Int) -> (statements: Int, exhausted: Int) {
            lock.withLock {
                defer { storageTotals = (statements, exhausted) }
                return (statements - storageTotals.statements, exhausted - storageTotals.exhausted)
            }
        }
    }

    /// A registry of its own.
    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(20),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(5),
        ]
        factory.valueHistogramBuckets["pushbridge_group_commit_writes"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
        self.factory = factory
    }

    func request(method: String, route: String, status: Int, duration: Duration) {
        let factory = factory
        handles.handle("\(method) \(route) \(status)") {
            Metrics.Counter(label: "pushbridge_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory)
        }.increment()
        handles.handle("timer " + route) {
            Metrics.Timer(label: "pushbridge_http_request_duration_seconds", dimensions: [("route", route)], factory: factory)
        }.recordNanoseconds(duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    func message(dialect: String, isRepeat: Bool, outcomes: [String: Int]) {
        let factory = factory
        handles.handle("messages \(dialect) \(isRepeat)") {
            Metrics.Counter(label: "pushbridge_messages_total", dimensions: [("dialect", dialect), ("repeat", String(isRepeat))], factory: factory)
        }.increment()
        guard !isRepeat else { return }
        for (outcome, count) in outcomes {
            handles.handle("decisions \(dialect) \(outcome)") {
                Metrics.Counter(label: "pushbridge_decisions_total", dimensions: [("dialect", dialect), ("outcome", outcome)], factory: factory)
            }.increment(by: count)
        }
    }

    /// A page of a push task recorded: its receivers by outcome (`push`, or the reason not pushed).
    func pushTaskPage(_ progress: TaskProgress) {
        let factory = factory
        if progress.pushed > 0 {
            handles.handle("task push") { Metrics.Counter(label: "pushbridge_push_task_receivers_total", dimensions: [("outcome", "push")], factory: factory) }
                .increment(by: progress.pushed)
        }
        for (reason, count) in progress.suppressed where count > 0 {
            handles.handle("task \(reason)") { Metrics.Counter(label: "pushbridge_push_task_receivers_total", dimensions: [("outcome", reason)], factory: factory) }
                .increment(by: count)
        }
    }

    /// A push task ended (`finished` or `cancelled`).
    func pushTaskEnded(_ state: String) {
        let factory = factory
        handles.handle("task ended \(state)") { Metrics.Counter(label: "pushbridge_push_tasks_ended_total", dimensions: [("state", state)], factory: factory) }.increment()
    }

    func committed(app: String, batch: Int, waiting: Int) {
        let factory = factory
        handles.handle("commit writes") { Recorder(label: "pushbridge_group_commit_writes", factory: factory) }.record(batch)
        handles.handle("queue depth \(app)") { Gauge(label: "pushbridge_write_queue_depth", dimensions: [("app", app)], factory: factory) }.record(waiting)
    }

    /// Idle apps the registry closed (least recently used past `max-open-apps`).
    func appsClosed(_ count: Int) {
        let factory = factory
        handles.handle("apps closed") { Metrics.Counter(label: "pushbridge_apps_closed_total", factory: factory) }.increment(by: count)
    }

    /// Apps whose store is open now.
    func appsOpen(_ count: Int) {
        let factory = factory
        handles.handle("apps open") { Gauge(label: "pushbridge_apps_open", factory: factory) }.record(count)
    }

    /// The storage's connections to its database server (PostgreSQL), read when `/metrics` is asked for.
    func storage(_ connections: StorageConnections) {
        let factory = factory
        handles.handle("db open") { Gauge(label: "pushbridge_database_connections_open", factory: factory) }.record(connections.open)
        handles.handle("db limit") { Gauge(label: "pushbridge_database_connections_limit", factory: factory) }.record(connections.limit)
        // Totals kept by the storage: the counters move by what was added since the last scrape.
        let (statements, exhausted) = handles.storageIncrements(statements: connections.statements, exhausted: connections.exhausted)
        handles.handle("db statements") { Metrics.Counter(label: "pushbridge_database_statements_total", factory: factory) }.increment(by: max(0, statements))
        handles.handle("db exhausted") { Metrics.Counter(label: "pushbridge_database_connections_exhausted_total", factory: factory) }.increment(by: max(0, exhausted))
    }

    func delivered(outcome: String, reason: String, count: Int) {
        let factory = factory
        handles.handle("deliveries \(outcome) \(reason)") {
            Metrics.Counter(label: "pushbridge_deliveries_total", dimensions: [("outcome", outcome), ("reason", reason)], factory: factory)
        }.increment(by: count)
    }

    func deliveryQueue(app: String, depth: Int) {
        let factory = factory
        handles.handle("delivery queue \(app)") { Gauge(label: "pushbridge_delivery_queue_depth", dimensions: [("app", app)], factory: factory) }.record(depth)
    }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
