import Synchronization
import PushBridgeCore

/// New message ids for vendor sends that carry none: digits (the form vendors' message ids take) — the millisecond and a
/// six-digit counter, unique within this process (a million a millisecond).
final class VendorMessageIDs: Sendable {
    private let counter = Mutex<UInt64>(0)

    init() {}

    /// The next id.
    /// - Parameter now: the current instant.
    func next(_ now: Instant) -> String {
        let n = counter.withLock { counter in
            counter &+= 1
            return counter % 1_000_000
        }
        let suffix = String(n)
        return String(now.milliseconds) + String(repeating: "0", count: 6 - suffix.count) + suffix
    }
}
