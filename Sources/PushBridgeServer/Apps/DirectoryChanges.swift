import Dispatch
import Foundation
import Synchronization
import PushBridgeStore

/// Where changes to the app directory (create, bind, unbind) run: one at a time and in order, awaited
/// (a directory of files answers on a dispatch queue), so a request's access check never waits for them.
struct DirectoryChanges: Sendable {
    private let gate = WriterGate()
    /// Whether the service still takes changes (`false` once it is closing).
    let isOpen: @Sendable () -> Bool

    /// - Parameter isOpen: whether the service still takes changes.
    init(isOpen: @escaping @Sendable () -> Bool) { self.isOpen = isOpen }

    /// Runs one change after those before it; a closing service refuses it (``ServiceError/stopping``).
    func run<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        try await gate.holding {
            guard isOpen() else { throw ServiceError.stopping }
            return try await body()
        }
    }
}

/// When a shared directory may be read again after a miss: at most once a second, so a flood of
/// requests naming what does not exist costs the database one read a second.
final class DirectoryReloads: Sendable {
    private let last = Mutex(ContinuousClock.Instant.now - .seconds(2))

    init() {}

    /// Whether a reload may run now (and, if so, counts it as run).
    func isDue() -> Bool {
        last.withLock { last in
            guard ContinuousClock.now - last >= .seconds(1) else { return false }
            last = .now
            return true
        }
    }
}
