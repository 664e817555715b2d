import AsyncHTTPClient
import Foundation
import Logging
import PushBridgeAPNsMock
import PushBridgeFacade
import PushBridgeJSON
@testable import PushBridgeServer
import PushBridgeStore
import PushBridgeTestSupport
import PushBridgeServiceTestSupport
import PushBridgeVendorRESTTestSupport
import PushBridgeStoreTestSupport
import Synchronization
import Testing

/// The registry of open apps: idle apps past `max-open-apps` are closed and open again on their next
/// request, unseen by clients; an app with deliveries to make stays open until they are made; an
/// idle app costs no thread, so a thousand of them fit in a bounded process.
@Suite("App registry")
struct AppRegistryTests {
    typealias ServerProcess = ProcessScenario.ServerProcess

    /// Apps opened before the memory is first read: the process's heap grows over its first few hundred
    /// apps and then stays (run alone: 103 MB at 100 apps, 143 MB at 300, then 10–15 KiB an app to 1,000;
    /// read from 100 apps the budget failed alone at 41–47 KiB an app).
    static let warmApps = 300

    /// A gauge or counter's value in the `/metrics` text.
    static func metric(_ name: String, in text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last ?? "")
        }
        return nil
    }

    /// The threads of a process, and its resident memory in KiB (Linux `/proc`).
    static func threadsAndMemory(of pid: Int32) throws -> (threads: Int, residentKiB: Int) {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        func field(_ name: String) -> Int {
            let line = status.split(separator: "\n").first { $0.hasPrefix(name + ":") } ?? ""
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") ?? -1
        }
        return (field("Threads"), field("VmRSS"))
    }

    /// A storage twin: SQLite files in a data directory, each app's opening counted; an app named
    /// `slow…` opens only once the gate is opened (or after 20 s), `broken…` cannot be opened while
    /// `broken` is set (the database unreachable), and `busy`'s store is a ``HeldStore`` (kept in `busy`).
    final class CountingStorage: ServiceStorage {
        let files: SQLiteServiceStorage
        let openings = Mutex<[String: Int]>([:])
        let gate = DispatchSemaphore(value: 0)
        let broken = Mutex(true)
        let busy = Mutex<HeldStore?>(nil)

        init(path: String) { files = SQLiteServiceStorage(path: path) }

        func openDirectory() throws -> any AppDirectory { try files.openDirectory() }

        func openStore(forApp app: String) throws -> any PushStateStore {
            openings.withLock { $0[app, default: 0] += 1 }
            if app.hasPrefix("slow") { _ = gate.wait(timeout: .now() + 20) }
            if app.hasPrefix("broken") && broken.withLock({ $0 }) { throw StoreError(.unreachable, "the test's database is down") }
            let store = try files.openStore(forApp: app)
            guard app == "busy", let sqlite = store as? SQLiteStateStore else { return store }
            let held = HeldStore(sqlite)
            busy.withLock { $0 = held }
            return held
        }

        func openings(of app: String) -> Int { openings.withLock { $0[app] ?? 0 } }
    }

    /// A store whose updates wait for a gate (or 20 s) once `held` is set: an app busy with a write.
    final class HeldStore: TransactionStore {
        let base: SQLiteStateStore
        let held = Mutex(false)
        let started = Mutex(false)
        let gate = DispatchSemaphore(value: 0)

        init(_ base: SQLiteStateStore) { self.base = base }

        func write<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T { try base.write(body) }
        func read<T>(_ body: (any PushStateTransaction) throws -> T) throws -> T { try base.read(body) }
        func update<Outcome: Sendable>(
            reading keys: StateKeys, deciding decide: @escaping @Sendable (StateSnapshot) throws -> (changes: StateChanges, outcome: Outcome)
        ) async throws -> Outcome {
            if held.withLock({ $0 }) {
                started.withLock { $0 = true }
                let gate = gate
                _ = await onAThreadOfItsOwn { gate.wait(timeout: .now() + 20) == .success }
            }
            return try await base.update(reading: keys, deciding: decide)
        }
    }

    /// With `max-open-apps` 1 and the open app busy, a request for another app is served by the app it
    /// opens (a tenant just opened is not closed again before it serves: no close-and-reopen loop).
    @Test func anAppJustOpenedServesItsRequestWhileTheOthersAreBusy() async throws {
        let storage = CountingStorage(path: temporaryDirectory())
        try await withLiveService(database: nil, mode: .router, storage: storage, { $0.maxOpenApps = 1 }) { service in
            let busyKey = try await service.createApp("busy")
            let otherKey = try await service.createApp("other")
            let config = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/app.json"), encoding: .utf8)
            #expect(try await service.call(.put, "/v1/apps/busy", key: busyKey, body: config).status == 200)
            let held = try #require(storage.busy.withLock { $0 })
            held.held.withLock { $0 = true }
            let busyWrite = Task { try await service.call(.put, "/v1/apps/busy", key: busyKey, body: config).status }
            let started = Date().addingTimeInterval(60)
            while !held.started.withLock({ $0 }) && Date() < started { try await Task.sleep(for: .milliseconds(5)) }
            #expect(held.started.withLock { $0 }, "the busy app's write waits for the gate")
            // The only open app is busy: the other app opens past the limit and serves its request.
            let other = Task { try await service.call(.put, "/v1/apps/other", key: otherKey, body: config).status }
            let deadline = Date().addingTimeInterval(60)
            while storage.openings(of: "other") < 1 && Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(300))
            #expect(storage.openings(of: "other") == 1, "opened once, not closed and opened again in a loop")
            held.gate.signal()
            #expect(try await other.value == 200)
            #expect(try await busyWrite.value == 200)
        }
    }

    /// Twenty requests for an app whose store is still opening wait for that one opening (single
    /// flight); meanwhile other apps and the health routes answer (no lock is held across it). An
    /// opening that fails is answered 503 and tried again by the next request, which then succeeds.
    @Test func anAppOpensOnceAndOffTheOtherAppsPath() async throws {
        let storage = CountingStorage(path: temporaryDirectory())
        try await withLiveService(database: nil, mode: .router, storage: storage) { service in
            let slowKey = try await service.createApp("slow")
            let fastKey = try await service.createApp("fast")
            let brokenKey = try await service.createApp("broken")
            let config = try String(contentsOf: Repository.root.appendingPathComponent("Examples/facade/app.json"), encoding: .utf8)
            let waiting = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<20 { group.addTask { try await service.call(.put, "/v1/apps/slow", key: slowKey, body: config).status } }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            while storage.openings(of: "slow") == 0 { try await Task.sleep(for: .milliseconds(5)) }
            // The slow opening holds: another app, and the health routes, answer meanwhile.
            #expect(try await service.call(.put, "/v1/apps/fast", key: fastKey, body: config).status == 200)
            #expect(try await service.call(.get, "/healthz").status == 200)
            #expect(try await service.call(.get, "/readyz").status == 200)
            #expect(storage.openings(of: "slow") == 1)
            storage.gate.signal()
            let statuses = try await waiting.value
            #expect(statuses == Array(repeating: 200, count: 20), "\(statuses)")
            #expect(storage.openings(of: "slow") == 1, "one opening for twenty requests")
            #expect(storage.openings(of: "fast") == 1)

            let down = try await service.call(.put, "/v1/apps/broken", key: brokenKey, body: config)
            #expect(down.status == 503 && down.errorCode == "store-unavailable", "\(down.status) \(down.text)")
            #expect(down.headers[.retryAfter] != nil)
            storage.broken.withLock { $0 = false }
            #expect(try await service.call(.put, "/v1/apps/broken", key: brokenKey, body: config).status == 200)
            #expect(storage.openings(of: "broken") == 2, "a failed opening is not remembered")
        }
    }

    /// The registry closed a tenant and opened the app again before the old tenant's worker was
    /// stopped: the new tenant keeps a worker of its own (workers are the tenant's, not the app id's),
    /// and what it queues is delivered.
    @Test func anAppOpenedAgainBeforeItsOldWorkerStoppedKeepsAWorker() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            var configuration = ServiceConfiguration()
            try ServiceDeliveryScenario.configure(&configuration, kit: kit, mock: mock)
            let delivery = try ServiceDelivery(settings: try #require(configuration.delivery), metrics: ServiceMetrics(), logger: Logger(label: "test"))
            let running = Task { await delivery.run() }
            let store = MemoryStateStore()
            let facade = try await exampleDeliveryFacade(store)
            func tenant() -> AppTenant {
                let writer = GroupCommitWriter(
                    facade: facade, maxBatch: 8, maxWaitMicroseconds: 0, timeout: .seconds(600), name: "a")
                return AppTenant(id: "a", facade: facade, writer: writer, afterWrite: { delivery.wake("a") }) { throw ServiceError.stopping }
            }
            let (old, new) = (tenant(), tenant())
            delivery.start(old)
            delivery.start(new)
            await delivery.stop(old)
            try await new.update { _ = try await $0.send([try $0.prepare(try textMessage(id: "m1"), dialect: "agora-silent", now: .now)]) }
            let deadline = Date().addingTimeInterval(120)
            while mock.requests.count < 2 && Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
            #expect(mock.requests.count == 2, "u2's two devices, delivered by the new tenant's worker")
            delivery.finish()
            await running.value
        }
    }

    /// Six apps, at most two open: every app keeps its state across being closed and opened again,
    /// messages sent to all six at once are each acknowledged once and delivered (a reopened app's
    /// worker starts again), and the registry closes the idle ones again afterwards.
    @Test func closedAppsOpenAgainWithTheirStateAndDeliver() async throws {
        let kit = try DeliveryKit()
        try await withMockAPNs(kit.mockConfiguration) { mock in
            try await withLiveService(database: nil, { c in
                try? ServiceDeliveryScenario.configure(&c, kit: kit, mock: mock)
                c.maxOpenApps = 2
            }) { service in
                let apps = (0..<6).map { "r\($0)" }
                var keys: [String: String] = [:]
                for app in apps { keys[app] = try await setUpExampleApp(service, app: app) }
                // Round one, one app at a time; round two, all six at once.
                for app in apps {
                    let sent = try await service.call(.post, "/v1/apps/\(app)/messages?dialect=agora-silent", key: keys[app], body: ProcessScenario.message("m1"))
                    #expect(sent.status == 201, "\(app): \(sent.text)")
                }
                let keysNow = keys
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for app in apps {
                        group.addTask {
                            for i in 2...6 {
                                let sent = try await service.call(
                                    .post, "/v1/apps/\(app)/messages?dialect=agora-silent", key: keysNow[app], body: ProcessScenario.message("m\(i)"))
                                #expect(sent.status == 201, "\(app) m\(i): \(sent.text)")
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                for app in apps {
                    for i in 1...6 {
                        let body = try await ServiceDeliveryScenario.settled(service, app: app, key: keys[app]!, message: "m\(i)")
                        let states = body["deliveries"]?.arrayValue?.compactMap { $0["state"]?.stringValue } ?? []
                        #expect(states == ["delivered", "delivered"], "\(app) m\(i): \(body)")
                    }
                    // The same id again is the same message, decided once, whichever tenant answers.
                    let again = try await service.call(.post, "/v1/apps/\(app)/messages?dialect=agora-silent", key: keys[app], body: ProcessScenario.message("m1"))
                    #expect(again.status == 200, "\(app): \(again.text)")
                }
                #expect(mock.requests.count == apps.count * 6 * 2, "every delivery made once: \(mock.requests.count)")
                // Idle again: the sweep closes all but two.
                var open = Double.infinity
                var closed = 0.0
                let deadline = Date().addingTimeInterval(30)
                while Date() < deadline {
                    let metrics = try await service.call(.get, "/metrics").text
                    open = Self.metric("pushbridge_apps_open", in: metrics) ?? .infinity
                    closed = Self.metric("pushbridge_apps_closed_total", in: metrics) ?? 0
                    if open <= 2 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(open <= 2, "apps open: \(open)")
                #expect(closed >= 4, "apps closed: \(closed)")
            }
        }
    }

    /// A thousand apps, each opened once, then idle, with `max-open-apps` 32: the process holds at
    /// most 50 threads, at most 32 stores, and its memory does not grow with the apps it closed;
    /// restarted with delivery configured (every app opened at start to finish its queue), the same.
    @Test func aThousandIdleAppsCostNoThreads() async throws {
        let database = temporaryDirectory() + "/service"
        let kit = try DeliveryKit()
        let apps = 1_000
        let examples = Repository.root.appendingPathComponent("Examples/facade")
        let config = try String(contentsOf: examples.appendingPathComponent("app.json"), encoding: .utf8)

        /// Waits until the process has settled: at most 50 threads, `limit` apps open and at least
        /// `closed` closed (bounded).
        func settled(_ server: ServerProcess, _ client: HTTPClient, limit: Int, closed: Int = 0) async throws -> (threads: Int, residentKiB: Int, open: Double) {
            var last = (threads: Int.max, residentKiB: 0, open: Double.infinity)
            let deadline = Date().addingTimeInterval(60)
            while Date() < deadline {
                let metrics = try await client.call(.GET, server.base + "/metrics", key: nil).text
                let (threads, memory) = try Self.threadsAndMemory(of: server.process.processIdentifier)
                last = (threads, memory, Self.metric("pushbridge_apps_open", in: metrics) ?? .infinity)
                let closedSoFar = Self.metric("pushbridge_apps_closed_total", in: metrics) ?? 0
                if last.threads <= 50 && last.open <= Double(limit) && closedSoFar >= Double(closed) { break }
                try await Task.sleep(for: .milliseconds(250))
            }
            return last
        }

        // Two malloc arenas: the growth then measures the apps, not how many arenas the threads that
        // happened to be busy at once opened (a loaded machine overlaps more requests).
        let environment = ["PUSHBRIDGE_MAX_OPEN_APPS": "32", "PUSHBRIDGE_LOG_LEVEL": "warning", "MALLOC_ARENA_MAX": "2"]
        let server = try await ServerProcess.start(database: database, extraEnvironment: environment)
        var memoryWarm = 0
        var memoryAtThousand = 0
        try await withHTTPClient { client in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        for i in stride(from: lane, to: Self.warmApps, by: 8) {
                            try await Self.openApp("t\(i)", server, client, config: config)
                        }
                    }
                }
                try await group.waitForAll()
            }
            memoryWarm = try await settled(server, client, limit: 32, closed: Self.warmApps - 32).residentKiB
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        for i in stride(from: Self.warmApps + lane, to: apps, by: 8) {
                            try await Self.openApp("t\(i)", server, client, config: config)
                        }
                    }
                }
                try await group.waitForAll()
            }
            let after = try await settled(server, client, limit: 32, closed: apps - 32)
            memoryAtThousand = after.residentKiB
            print("1,000 idle apps: \(after.threads) threads, \(after.open) open, \(memoryWarm) KiB at \(Self.warmApps) apps, \(memoryAtThousand) KiB at 1,000")
            #expect(after.threads <= 50, "threads: \(after.threads)")
            #expect(after.open <= 32, "apps open: \(after.open)")
            // 700 more apps known (a directory entry and metrics each), none of their stores kept:
            // far less than the ≈ 100 KiB or more that an open SQLite store costs.
            #expect(memoryAtThousand - memoryWarm < (apps - Self.warmApps) * 40, "\(memoryWarm) KiB at \(Self.warmApps) apps, \(memoryAtThousand) KiB at 1,000")
            // Every app still answers, with its state.
            let reply = try await client.call(.GET, server.base + "/v1/apps/t7/users/nobody", key: nil)
            #expect(reply.status == 401, "\(reply.text)")
        }
        #expect(await server.stop(signal: SIGTERM) == 0, "\(server.log)")

        // Restarted with delivery: every app opens to finish its queue, then the idle ones close.
        try await withMockAPNs(kit.mockConfiguration) { mock in
            let delivering = try await ServerProcess.start(
                database: database, extraEnvironment: try ProcessScenario.environment(kit, mock, concurrency: 16).merging(environment) { $1 })
            try await withHTTPClient { client in
                let after = try await settled(delivering, client, limit: 32, closed: apps - 32)
                print("restarted with delivery: \(after.threads) threads, \(after.open) open, \(after.residentKiB) KiB")
                #expect(after.threads <= 50, "threads: \(after.threads)")
                #expect(after.open <= 32, "apps open: \(after.open)")
                let metrics = try await client.call(.GET, delivering.base + "/metrics", key: nil).text
                #expect((Self.metric("pushbridge_apps_closed_total", in: metrics) ?? 0) >= Double(apps - 32), "\(metrics)")
            }
            #expect(await delivering.stop(signal: SIGTERM) == 0, "\(delivering.log)")
        }
    }

    /// Creates an app and opens its store (its configuration is a write).
    static func openApp(_ app: String, _ server: ServerProcess, _ client: HTTPClient, config: String) async throws {
        let created = try await client.call(.POST, server.base + "/v1/apps", key: testAdminKey, body: #"{"app":"\#(app)"}"#)
        let key = try #require(created.json?["key"]?.stringValue, "\(created.text)")
        let configured = try await client.call(.PUT, server.base + "/v1/apps/\(app)", key: key, body: config)
        #expect(configured.status == 200, "\(app): \(configured.text)")
    }
}
