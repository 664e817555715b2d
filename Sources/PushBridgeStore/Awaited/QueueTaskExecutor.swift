import Dispatch

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
