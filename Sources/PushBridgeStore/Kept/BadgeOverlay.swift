import PushBridgeCore
import PushBridgeRecordCoding

/// The badge log read on a connection: each user row's latest logged counter.
package struct BadgeOverlay {
    /// The latest logged counter per user row.
    package var counters = UserRowMap()
    /// How many entries the log holds (counting repeats of a user).
    package var entries = 0
    /// The first and last log rows read (`0`: none).
    package var firstID: Int64 = 0
    package var lastID: Int64 = 0
    /// Another connection committed since: rows after `lastID` may have been added, or the log folded.
    package var isStale = false

    /// An empty log.
    package init() {}

    /// Adds one log row's entries, latest last.
    /// - Parameters:
    ///   - blob: the row's `entries`, in either format (``BadgeLogEntries``).
    ///   - id: the row's id.
    /// - Throws: ``StoreError`` when the bytes are not entries PushBridge wrote.
    package mutating func add(_ blob: UnsafeRawBufferPointer, id: Int64) throws {
        entries += try BadgeLogEntries.read(blob) { key, badge in counters.set(badge, for: key) }
        read(id)
    }

    /// Adds the entries of a row just written.
    package mutating func add(_ badges: [(key: UserKey, badge: Int)], id: Int64) {
        for entry in badges { counters.set(entry.badge, for: entry.key.rawValue) }
        entries += badges.count
        read(id)
    }

    /// Notes that log row `id` is read.
    private mutating func read(_ id: Int64) {
        if firstID == 0 { firstID = id }
        lastID = id
    }
}

extension BadgeOverlay {
    /// Counters written at once from this many up go to the badge log as one row (a group send);
    /// fewer are updated in place (while the log holds none of them).
    package static let logThreshold = 64

    /// A user row's badge counter: its latest log entry, else `stored` (badge_counters').
    package func badge(of key: Int64, stored: Int) -> Int {
        entries == 0 ? stored : counters[key] ?? stored
    }

    /// Whether counters go to the badge log: many at once, or any of a user the log already has.
    /// - Parameter overlay: the log as read, asked for only when there are few counters.
    package static func logs(_ badges: [(key: UserKey, badge: Int)], overlay: () throws -> BadgeOverlay) rethrows -> Bool {
        if badges.count >= logThreshold { return true }
        let overlay = try overlay()
        return overlay.entries > 0 && badges.contains { overlay.counters[$0.key.rawValue] != nil }
    }
}

extension BadgeLogEntries {
    /// The entries of `badges`, as varints (``BadgeLogEntries/write(count:_:)``).
    package static func write(_ badges: [(key: UserKey, badge: Int)]) -> [UInt8] {
        badges.withUnsafeBufferPointer { badges in write(count: badges.count) { (badges[$0].key.rawValue, badges[$0].badge) } }
    }

    /// Reads one row's entries in order (``BadgeLogEntries/entries(in:_:)``).
    /// - Throws: ``StoreError`` `unexpected-value` when the bytes are not entries PushBridge wrote.
    package static func read(_ blob: UnsafeRawBufferPointer, _ entry: (Int64, Int) -> Void) throws -> Int {
        do {
            return try entries(in: blob, entry)
        } catch {
            throw StoreError(.unexpectedValue, "a badge log row of \(blob.count) bytes: \(error.what)", context: "badge_log.entries")
        }
    }
}
