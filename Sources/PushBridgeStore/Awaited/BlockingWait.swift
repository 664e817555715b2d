import Dispatch

/// How a synchronous caller uses a store whose calls are awaited (PostgreSQL): the calling thread
/// blocks until the call ends. For command-line tools, benchmarks' set-up and tests — a service
/// never has one, so a synchronous call on its stores refuses instead of holding a thread.
///
/// The awaited call runs on a dispatch queue of its own (a task executor), not the cooperative
/// pool, so a caller blocking a cooperative thread cannot starve the call it waits for.
public struct BlockingWait: Sendable {
    private let executor = QueueTaskExecutor(DispatchQueue(label: "pushbridge-blocking-wait"))

    public init() {}

    /// Runs `work` and blocks the calling thread until it ends.
    /// - Parameter work: the awaited call; runs once.
    /// - Returns: what it returned.
    public func run<T>(_ work: () async throws -> T) throws -> T {
        try withoutActuallyEscaping(work) { work in
            let call = Call(work)
            let done = DispatchSemaphore(value: 0)
            Task(executorPreference: executor) {
                await call.run()
                done.signal()
            }
            done.wait()
            return try call.result!.get()
        }
    }
}

/// One awaited call handed to a task: the task lets go of it before the caller goes on (the call
/// does not escape the caller's `run`).
private final class Call<T>: @unchecked Sendable {
    private var work: (() async throws -> T)?
    var result: Result<T, any Error>?

    init(_ work: @escaping () async throws -> T) { self.work = work }

    func run() async {
        guard let work else { return }
        self.work = nil
        do { result = .success(try await work()) } catch { result = .failure(error) }
    }
}

/// Runs a task's jobs on a dispatch queue (a task's executor preference): the task holds a thread
/// only while it runs, and never waits for the cooperative pool.
package final class QueueTaskExecutor: TaskExecutor {
    package let queue: DispatchQueue

    package init(_ queue: DispatchQueue) { self.queue = queue }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
