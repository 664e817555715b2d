import Foundation
import Synchronization

/// Wakes a sleeping worker early: ``wait(milliseconds:)`` returns when ``wake()`` is called or the
/// time is up; a wake while nobody waits is kept for the next wait.
package final class WakeSignal: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        /// The timer of the wait in progress, cancelled by a wake (no sleeping task outlives its wait).
        var timer: Task<Void, Never>?
        var generation = 0
    }
    private let state = Mutex(State())

    package init() {}

    package func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if let waiter = state.waiter {
                state.waiter = nil
                state.timer?.cancel()
                state.timer = nil
                return waiter
            }
            state.pending = true
            return nil
        }
        waiter?.resume()
    }

    package func wait(milliseconds: Int64) async {
        if Task.isCancelled { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let generation: Int? = state.withLock { state in
                    if state.pending {
                        state.pending = false
                        return nil
                    }
                    state.generation += 1
                    state.waiter = continuation
                    return state.generation
                }
                guard let generation else { return continuation.resume() }
                let timer = Task {
                    try? await Task.sleep(nanoseconds: UInt64(max(0, milliseconds)) * 1_000_000)
                    self.resume(generation: generation)
                }
                state.withLock { state in
                    // Woken before the timer was kept: it ends now.
                    if state.generation == generation && state.waiter != nil { state.timer = timer } else { timer.cancel() }
                }
            }
        } onCancel: {
            self.wake()
        }
    }

    private func resume(generation: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.generation == generation, let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.timer = nil
            return waiter
        }
        waiter?.resume()
    }
}
