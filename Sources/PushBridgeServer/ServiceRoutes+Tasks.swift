import Hummingbird
import PushBridgeCore
import PushBridgeFacade
import PushBridgeJSON
import PushBridgeStore

extension ServiceRoutes {
    /// Push tasks (campaigns) over the native API: the vendors show a task's results only in their
    /// consoles, so an app's tasks are listed, read (what was decided, pushed, suppressed by reason,
    /// and its deliveries) and cancelled here.
    func registerTasks(on router: RecordingRouter<Context>) {
        router.get("/v1/apps/:app/push-tasks") { request, context in
            let tenant = try await tenant(request, context)
            let tasks = try await answering { try await tenant.reading { try await $0.tasks(.recent(limit: 100)) } }
            apps.campaigns.wake(tenant.id)
            let now = Instant.now
            return json(.object(JSONObject([("tasks", .array(tasks.map { Self.taskJSON($0, deliveries: nil, now: now) }))])))
        }
        // → 201 the task; its message goes one-to-one to each receiver of the audience.
        router.post("/v1/apps/:app/push-tasks") { request, context in
            let tenant = try await tenant(request, context)
            let dialect = try dialect(request, in: tenant)
            let sender = try queryIdentifier("sender", request)
            let body = try await body(request, context)
            let now = Instant.now
            let task = try checking { () throws -> PushTask in
                let asked = try NativeTaskRequest(body, now: now)
                // Read now as each receiver's will be: bad input is answered here, never met by the runner.
                let adapter = try tenant.registry.adapter(dialect, at: .root)
                let example = try adapter.readdressed(asked.message, at: .root / "message", to: "pushbridge-task-check", id: "pushtask-check")
                let prepared = try tenant.facade.prepare(example, dialect: dialect, now: now, sender: sender, pointer: .root / "message")
                let stored = NativeTask.stored(dialect: dialect, sender: prepared.sender, message: asked.message)
                return PushTask(
                    id: Self.newTaskID(now), family: NativeTask.family, audience: asked.audience, request: Array(stored.compactText.utf8), createdAt: now,
                    startAt: max(asked.startAt ?? now, now))
            }
            let created = try await answering {
                do {
                    return try await createTask(task, labelNames: nil, in: tenant)
                } catch let refusal as PushFacade.TaskRefusal {
                    throw ServiceError(.tooManyRequests, code: "too-many-tasks", expected: refusal.description, retryAfterSeconds: 60)
                }
            }
            return json(Self.taskJSON(created, deliveries: nil, now: now), status: .created)
        }
        router.get("/v1/apps/:app/push-tasks/:task") { request, context in
            let tenant = try await tenant(request, context)
            let id = try taskID(context)
            guard let status = try await answering({ try await tenant.reading { try await $0.taskStatus(id) } }) else { throw Self.unknownTask(id) }
            apps.campaigns.wake(tenant.id)
            return json(Self.taskJSON(status.task, deliveries: status.deliveries, now: .now))
        }
        router.post("/v1/apps/:app/push-tasks/:task/cancel") { request, context in
            let tenant = try await tenant(request, context)
            let id = try taskID(context)
            let now = Instant.now
            let task = try await answering {
                do {
                    return try await tenant.update { try await $0.cancelTask(id, at: now) }
                } catch let refusal as PushFacade.TaskRefusal where refusal.isUnknownTask {
                    throw Self.unknownTask(id)
                }
            }
            apps.campaigns.wake(tenant.id)
            if task.endedAt.map({ $0 >= now }) == true { metrics.pushTaskEnded("cancelled") }
            return json(Self.taskJSON(task, deliveries: nil, now: .now))
        }
    }

    /// Stores a new push task (a vendor route's) under the service's task limit and wakes the app's
    /// task runner.
    /// - Parameters:
    ///   - task: the task.
    ///   - labelNames: its labels' names as requested (they must exist), or `nil` (they need not).
    ///   - tenant: the app.
    ///   - limit: the vendor's limit, tasks a window of seconds; by default the configured
    ///     `push-task-limit` in 5 minutes (Easemob's).
    /// - Throws: the facade's `LabelRefusal` and `TaskRefusal` (the vendor route answers them in its
    ///   shape), store errors.
    package func createTask(_ task: PushTask, labelNames: [String]?, in tenant: AppTenant, limit: (tasks: Int, seconds: Int64)? = nil) async throws -> PushTask {
        let (limit, window) = limit ?? (configuration.pushTaskLimit, Self.pushTaskWindowSeconds)
        let created = try await tenant.update { try await $0.createTask(task, labelNames: labelNames, limit: limit, windowSeconds: window) }
        apps.campaigns.wake(tenant.id)
        logger.info("push task accepted", metadata: ["app": "\(tenant.id)", "task": "\(task.id)", "audience": "\(task.audience.encoded)"])
        return created
    }

    /// The vendors' window for their task limit: 5 minutes.
    package static let pushTaskWindowSeconds: Int64 = 300

    /// A new task id: the milliseconds since the epoch and 20 random bits (about 1.9 × 10¹⁸, as the
    /// vendor's ids are long integers of that size), growing with time.
    package static func newTaskID(_ now: Instant) -> Int64 {
        (now.milliseconds << 20) | Int64.random(in: 0..<(1 << 20))
    }

    private func taskID(_ context: Context) throws -> Int64 {
        let text = try parameter("task", context)
        guard let id = Int64(text), id > 0 else {
            throw ServiceError(.badRequest, code: "invalid-value", pointer: "{task}", expected: "a task id (a positive whole number)", found: JSONWriter.quoted(text))
        }
        return id
    }

    static func unknownTask(_ id: Int64) -> ServiceError {
        ServiceError(.notFound, code: "unknown-task", pointer: "{task}", expected: "a push task of the app", found: String(id))
    }

    /// A task as the native API shows it: `state` is `scheduled` before its start, `running` until it
    /// finishes, then `finished` or `cancelled`.
    static func taskJSON(_ task: PushTask, deliveries: OutboxCounts?, now: Instant) -> JSONValue {
        let state: String
        switch task.state {
        case .pending: state = task.startAt > now ? "scheduled" : "running"
        case .finished: state = "finished"
        case .cancelled: state = "cancelled"
        }
        var fields: [(key: String, value: JSONValue)] = [
            ("id", .int(task.id)), ("family", .string(task.family)), ("labels", .array(task.audience.all.map(JSONValue.string))), ("anyLabels", .array(task.audience.any.map(JSONValue.string))), ("state", .string(state)),
            ("createdAt", .string(task.createdAt.description)), ("startAt", .string(task.startAt.description)),
        ]
        func values(_ list: [UserAttribute]) -> JSONValue { .object(JSONObject(list.map { ($0.name, .string($0.value)) })) }
        if !task.audience.attributes.isEmpty { fields.append(("attributes", values(task.audience.attributes))) }
        if !task.audience.anyAttributes.isEmpty { fields.append(("anyAttributes", values(task.audience.anyAttributes))) }
        if let ended = task.endedAt { fields.append(("endedAt", .string(ended.description))) }
        fields += [
            ("targets", .int(Int64(task.progress.targets))), ("pushed", .int(Int64(task.progress.pushed))),
            ("suppressed", .object(JSONObject(task.progress.suppressed.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) }))),
        ]
        if let deliveries {
            fields.append(
                ("deliveries", .object(JSONObject([("queued", .int(Int64(deliveries.queued))), ("delivered", .int(Int64(deliveries.delivered))), ("failed", .int(Int64(deliveries.failed)))]))))
        }
        return .object(JSONObject(fields))
    }
}
