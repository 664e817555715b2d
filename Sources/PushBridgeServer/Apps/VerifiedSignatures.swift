import Foundation
import PushBridgeCore
import PushBridgeStore

/// Credentials that verified (a vendor family's request signatures or app tokens): the text, for whom and which
/// binding, and until when. Bounded (emptied when full); a changed binding (a new secret) no longer
/// matches its entries.
package final class VerifiedSignatures: @unchecked Sendable {
    private struct Entry {
        var key: String
        var boundAt: Instant
        var identifier: String
        var expiresAt: Int64
    }

    private let lock = NSLock()
    private var entries: [String: Entry] = [:]
    static let capacity = 1_024

    /// Whether `sig` verified for this binding and identifier and has not expired at `now` (seconds).
    package func isValid(_ sig: String, binding: VendorBinding, identifier: String, now: Int64) -> Bool {
        lock.withLock {
            guard let entry = entries[sig] else { return false }
            return entry.key == binding.key && entry.boundAt == binding.boundAt && entry.identifier == identifier && now < entry.expiresAt
        }
    }

    /// Whether an app token checked for this binding and has not expired at `now`.
    package func isValid(_ token: String, binding: VendorBinding, now: Instant) -> Bool {
        isValid(token, binding: binding, identifier: "", now: now.milliseconds)
    }

    /// Remembers a checked app token.
    package func remember(_ token: String, binding: VendorBinding, expiresAt: Instant) {
        remember(token, binding: binding, identifier: "", expiresAt: expiresAt.milliseconds)
    }

    /// Remembers a verified signature.
    package func remember(_ sig: String, binding: VendorBinding, identifier: String, expiresAt: Int64) {
        lock.withLock {
            if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
            entries[sig] = Entry(key: binding.key, boundAt: binding.boundAt, identifier: identifier, expiresAt: expiresAt)
        }
    }
}
