import Dispatch
import PushBridgeStore

/// Where changes to the app directory (create, bind, unbind) run: one at a time and in order, off
/// the event loops and the request tasks, so a request's access check never waits for them.
struct DirectoryChanges: Sendable {
    private let queue = DispatchQueue(label: "pushbridge-app-directory")
    /// Whether the service still takes changes (`false` once it is closing).
    let isOpen: @Sendable () -> Bool

    /// - Parameter isOpen: whether the service still takes changes.
    init(isOpen: @escaping @Sendable () -> Bool) { self.isOpen = isOpen }

    /// Runs one change on the queue; a closing service refuses it (``ServiceError/stopping``).
    func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [isOpen] in
                continuation.resume(with: Result {
                    guard isOpen() else { throw ServiceError.stopping }
                    return try body()
                })
            }
        }
    }
}
