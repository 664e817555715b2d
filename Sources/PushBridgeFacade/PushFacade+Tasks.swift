import PushBridgeCore
import PushBridgeStore

// Push tasks (campaigns): a vendor request that pushes to the users of some labels or tags, or of the app,
// stored when accepted and decided a page of receivers at a time by the service's task runner. Each
// receiver's push is a message whose id names the task and the receiver, so a page decided again
// (a node that died before it recorded the page, two nodes on one task) is answered from the
// records: no receiver is pushed twice.
extension PushFacade {
    /// Why a task call was refused.
    public struct TaskRefusal: Error, Hashable, Sendable, CustomStringConvertible {
        private enum Reason: Hashable, Sendable {
            case tooManyTasks(limit: Int, seconds: Int64)
            case unknownTask
        }
        private let reason: Reason
        /// The task id the call named (0 for a new task).
        public let task: Int64

        /// The app has `limit` tasks pending or created within `seconds`.
        public static func tooManyTasks(limit: Int, seconds: Int64) -> Self { Self(reason: .tooManyTasks(limit: limit, seconds: seconds), task: 0) }
        /// No task has this id.
        public static func unknownTask(_ id: Int64) -> Self { Self(reason: .unknownTask, task: id) }

        public var isUnknownTask: Bool { reason == .unknownTask }

        public var description: String {
            switch reason {
            case .tooManyTasks(let limit, let seconds): "at most \(limit) push tasks at a time, and \(limit) in \(seconds / 60) minutes"
            case .unknownTask: "no push task \(task)"
            }
        }
    }

    /// A task and its deliveries so far, counted by state.
    public struct TaskStatus: Hashable, Sendable {
        public var task: PushTask
        public var deliveries: OutboxCounts
    }

    /// Stores a new task: fewer than `limit` tasks may be pending or have been created within
    /// `windowSeconds` before it, and with `labelNames` its labels must exist.
    /// - Parameters:
    ///   - task: the task (pending, nothing decided).
    ///   - labelNames: its labels' names as the request gave them (for the refusal), in the order of
    ///     `TaskAudience.labels`; `nil`: labels need not exist (a tag nobody has pushes to nobody).
    ///   - limit: the most tasks pending or created within the window.
    ///   - windowSeconds: the window.
    /// - Throws: ``LabelRefusal`` for an unknown label, ``TaskRefusal`` past the limit.
    public func createTask(_ task: PushTask, labelNames: [String]?, limit: Int, windowSeconds: Int64) async throws -> PushTask {
        var keys = StateKeys()
        let named = labelNames == nil ? [] : task.audience.labels
        let labels = named.map { keys.addLabel($0) }
        let pending = keys.addTasks(.pending)
        let recent = keys.addTasks(.createdSince(task.createdAt.adding(seconds: -windowSeconds)))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                for (i, position) in labels.enumerated() where snapshot.labels[position] == nil {
                    throw LabelRefusal.unknownLabel(i < (labelNames?.count ?? 0) ? labelNames![i] : named[i])
                }
                let counted = Set(snapshot.tasks[pending].map(\.id)).union(snapshot.tasks[recent].map(\.id))
                guard counted.count < limit else { throw TaskRefusal.tooManyTasks(limit: limit, seconds: windowSeconds) }
                return (StateChanges(tasks: [task]), task)
            })
    }

    /// A task and its deliveries counted, or `nil`.
    public func taskStatus(_ id: Int64) async throws -> TaskStatus? {
        var keys = StateKeys()
        let task = keys.addTasks(.task(id))
        let counts = keys.addDeliveryCounts(ofMessagesStartingWith: PushTask.messagePrefix(of: id))
        let snapshot = try await store.snapshot(keys)
        return snapshot.tasks[task].first.map { TaskStatus(task: $0, deliveries: snapshot.deliveryCounts[counts]) }
    }

    /// Tasks, newest first, at most `limit`; or every pending task, by id.
    public func tasks(_ query: TaskQuery) async throws -> [PushTask] {
        var keys = StateKeys()
        let position = keys.addTasks(query)
        return try await store.snapshot(keys).tasks[position]
    }

    /// Cancels a pending task: no further receiver is decided (pushes queued already are delivered).
    /// A task that ended is left as it is.
    /// - Returns: the task as it is now.
    /// - Throws: ``TaskRefusal`` for an unknown task.
    public func cancelTask(_ id: Int64, at now: Instant) async throws -> PushTask {
        var keys = StateKeys()
        let position = keys.addTasks(.task(id))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard var task = snapshot.tasks[position].first else { throw TaskRefusal.unknownTask(id) }
                guard task.state == .pending else { return (StateChanges(), task) }
                task.state = .cancelled
                task.endedAt = now
                return (StateChanges(tasks: [task]), task)
            })
    }

    /// A pending task's next receivers after its cursor, in code-point order, at most `limit`; `nil`
    /// when the task is not pending. Reads the task, then the page after the cursor read, and
    /// checks the cursor did not move meanwhile.
    public func nextReceivers(of id: Int64, limit: Int) async throws -> (task: PushTask, receivers: [UserID])? {
        for _ in 0..<8 {
            guard let task = try await tasks(.task(id)).first, task.state == .pending else { return nil }
            var keys = StateKeys()
            let again = keys.addTasks(.task(id))
            let page = keys.addPage(.audience(task.audience, after: task.cursor, limit: limit))
            let snapshot = try await store.snapshot(keys)
            guard let now = snapshot.tasks[again].first, now.state == .pending else { return nil }
            if now.cursor == task.cursor { return (now, snapshot.labelPages[page].users.map(\.user)) }
        }
        return nil
    }

    /// Records a page of a task: its cursor moves from `cursor` to `last`, its progress grows, and it
    /// finishes when `finished`. Written only when the task is pending with that cursor still.
    /// - Returns: whether it was written (`false`: another runner recorded the page, or the task ended).
    public func recordPage(of id: Int64, from cursor: UserID?, to last: UserID?, adding progress: TaskProgress, finished: Bool, at now: Instant) async throws -> Bool {
        var keys = StateKeys()
        let position = keys.addTasks(.task(id))
        return try await update(
            PlannedUpdate(keys: keys) { snapshot in
                guard var task = snapshot.tasks[position].first, task.state == .pending, task.cursor == cursor else { return (StateChanges(), false) }
                task.cursor = last ?? cursor
                task.progress.add(progress)
                if finished {
                    task.state = .finished
                    task.endedAt = now
                }
                return (StateChanges(tasks: [task]), true)
            })
    }
}
