import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore
import Synchronization

// What a node keeps of one app's data between its writes: groups' receivers (``ReceiverCache``) and
// the badge log as each user row's latest counter (``BadgeOverlay``), true at one `data_version`.

extension PostgresStateStore {
    /// One app's receivers and badge log as this node's writes last left them (a warm
    /// group send reads no member rows).
    ///
    /// Kept true by the node's own writes (as SQLite's store keeps its writer's): a saved user's row
    /// is read again, a counted badge is set in place, a membership change drops its group. Every
    /// write that changes what is kept moves `app_version.data_version` once per transaction; the
    /// write lock answers it (``PostgresStateStore/lockForWriting(_:readingRecordsOf:)``), and when it is not the
    /// version this node's last commit left, another node wrote: the receivers are dropped, and the
    /// badge log is read on from where it was (it only grows until a fold). A rollback or a failed
    /// commit drops everything. Used under the store's `lock`, except
    /// ``published``.
    final class KeptData: @unchecked Sendable {
        /// Groups' receivers, within the store's budget of rows.
        let receivers: ReceiverCache
        /// The badge log as read (`nil`: not read); `isStale` when another node may have appended to it.
        var badges: BadgeOverlay?
        /// One-to-one receivers and senders as read for sends.
        let users = KeptOneToOne()
        /// Groups' profiles as read for sends (`nil`: the group has none).
        var profiles: [String: [UInt8]?] = [:]
        /// `data_version` as this node's last committed write left it (`nil`: unknown).
        var dataVersion: Int64?
        /// The badge log as of a data version, for reads, which take no `lock` and see their own
        /// snapshot: they use it when their snapshot is at that version.
        let published = Mutex<(version: Int64, badges: BadgeOverlay)?>(nil)

        /// - Parameter limit: the most receiver rows kept across groups.
        init(limit: Int) {
            receivers = ReceiverCache(limit: limit)
        }

        /// Drops what another node may have changed, as the write lock found the data: at `version`,
        /// the badge log from `firstLog` to `lastLog` (`nil`: empty).
        func check(version: Int64, firstLog: Int64?, lastLog: Int64?) {
            if version != dataVersion {
                receivers.removeAll()
                users.removeAll()
                profiles.removeAll()
            }
            if let overlay = badges {
                if overlay.firstID == (firstLog ?? 0) && overlay.lastID == (lastLog ?? 0) {
                    badges?.isStale = false  // as read
                } else if overlay.firstID == 0 || overlay.firstID == firstLog {
                    badges?.isStale = true  // appended to since: read on
                } else {
                    badges = nil  // folded since
                }
            }
            if badges == nil && firstLog == nil { badges = BadgeOverlay() }  // empty: known without reading it
        }

        /// Counters written by this node's sends: the kept rows that hold them take them.
        func counted(_ badges: [(key: UserKey, badge: Int)]) {
            receivers.setBadges(badges)
            users.setBadges(badges)
        }

        /// Reads on one badge log row another node appended after the last one kept: the log and the
        /// kept rows its counters belong to take them. Counters move no data version (migration
        /// `2026-11-26-postgres-counters-logged`), so the kept receivers stay, counted on.
        /// - Throws: ``StoreError`` when the row's bytes are not entries PushBridge wrote.
        func readOn(_ row: BadgeLogRow) throws {
            var counted: [(key: UserKey, badge: Int)] = []
            try row.entries.withUnsafeReadableBytes { blob in
                _ = try BadgeLogEntries.read(blob) { key, badge in counted.append((UserKey(rawValue: key), badge)) }
            }
            badges?.add(counted, id: row.id)
            self.counted(counted)
        }

        /// Notes a committed write: what is kept is true at `version` (`nil`: unknown, dropped).
        func committed(at version: Int64?) {
            if profiles.count > KeptOneToOne.limit { profiles.removeAll() }
            guard let version else { return forget() }
            dataVersion = version
            guard let badges, !badges.isStale else { return }
            // Published at a new version or log, else every ``publishEvery`` rows: each publication
            // costs the next count a copy of the log's counters, and a read reads on from the rows
            // published (at most that many).
            published.withLock { published in
                guard let last = published?.badges, published?.version == version, last.firstID == badges.firstID,
                    badges.lastID - last.lastID < Self.publishEvery
                else { return published = (version, badges) }
            }
        }

        /// Badge log rows a read may read on past what the node published.
        static let publishEvery: Int64 = 1_024

        /// Forgets everything kept (a rollback, a failed commit).
        func forget() {
            receivers.removeAll()
            users.removeAll()
            profiles.removeAll()
            badges = nil
            dataVersion = nil
        }
    }
}

extension PostgresStateStore {
    /// One-to-one receivers (as a receiver query reads them: one conversation's settings) and
    /// senders (display name and one group's name card), kept between a node's writes under the
    /// rule of ``KeptData``, so that a warm one-to-one send reads no user rows. A user saved or
    /// removed on this node is forgotten (everyone, when a device moved between users); a counted
    /// badge is set in place.
    final class KeptOneToOne {
        struct ReceiverKey: Hashable {
            var name: UserID
            var conversation: ConversationKey
        }
        struct SenderKey: Hashable {
            var name: UserID
            var group: String?
        }
        /// Past this many entries of either kind, the others are forgotten first.
        static let limit = 10_000
        private(set) var receivers: [ReceiverKey: StoredReceiver] = [:]
        /// A sender's state; `nil` for a name the store does not know.
        private(set) var senders: [SenderKey: UserState?] = [:]
        /// The receiver entries of each kept user row.
        private var byKey: [Int64: [ReceiverKey]] = [:]

        var isEmpty: Bool { receivers.isEmpty && senders.isEmpty }

        func keep(_ receiver: StoredReceiver, in conversation: ConversationKey) {
            if receivers.count >= Self.limit { removeAll() }
            let key = ReceiverKey(name: receiver.state.user, conversation: conversation)
            if receivers.updateValue(receiver, forKey: key) == nil, let row = receiver.key?.rawValue { byKey[row, default: []].append(key) }
        }

        func keep(sender: UserState?, _ key: SenderKey) {
            if senders.count >= Self.limit { senders.removeAll() }
            senders[key] = .some(sender)
        }

        /// The distinct receivers of a one-to-one audience (the sender left out), in order.
        static func wanted(_ users: [UserID], excluding sender: UserID) -> [UserID] {
            var seen = Set<UserID>()
            return users.filter { $0 != sender && seen.insert($0).inserted }
        }

        /// The kept receivers `wanted` (from ``wanted(_:excluding:)``) on `conversation`, when all are kept.
        func receivers(_ wanted: [UserID], in conversation: ConversationKey) -> [StoredReceiver]? {
            let known = wanted.compactMap { receivers[ReceiverKey(name: $0, conversation: conversation)] }
            return known.count == wanted.count ? known : nil
        }

        /// Sets the counters of the kept receivers among `badges`.
        func setBadges(_ badges: [(key: UserKey, badge: Int)]) {
            guard !byKey.isEmpty else { return }
            for (key, badge) in badges {
                for entry in byKey[key.rawValue] ?? [] { receivers[entry]?.state.badge = badge }
            }
        }

        /// Forgets a user by name (after a change to it).
        func forget(_ name: UserID) {
            for (key, receiver) in receivers where key.name == name {
                receivers[key] = nil
                if let row = receiver.key?.rawValue { byKey[row] = nil }
            }
            for key in senders.keys where key.name == name { senders[key] = nil }
        }

        func removeAll() {
            receivers.removeAll()
            senders.removeAll()
            byKey.removeAll()
        }
    }
}

extension PostgresStateStore.Transaction {
    /// The badge log as each user row's latest counter. A write reads the rows the node has not
    /// read yet (usually none: the write lock said where the log ends); a read uses the node's when
    /// its snapshot is at the version the node published, else reads its snapshot's log on from it.
    func badgeOverlay() async throws -> BadgeOverlay {
        if let kept = context.keptData {
            if let overlay = kept.badges, !overlay.isStale { return overlay }
            // Appended by another node: read on, each row's counters also set in the kept rows (its
            // receivers stay kept, as they stay when this node counts).
            if kept.badges == nil { kept.badges = BadgeOverlay() }
            for row in try await rows("SELECT id, entries FROM badge_log WHERE app = \(app) AND id > \(kept.badges?.lastID ?? 0) ORDER BY id") {
                try kept.readOn(BadgeLogRow(id: try row.int64(0), entries: try row.row[1].decode(ByteBuffer.self)))
            }
            kept.badges?.isStale = false
            return kept.badges ?? BadgeOverlay()
        }
        if let overlay = context.badges { return overlay }
        let published = context.start.published
        let from = published?.badges ?? BadgeOverlay()
        // At the published version, the rows from the published log's last on (counters move no
        // version: other nodes may have appended since); at another, every row's id.
        let found = try await rows(
            """
            SELECT a.data_version, l.id, CASE WHEN l.id > \(from.lastID) THEN l.entries END
            FROM apps a LEFT JOIN badge_log l ON l.app = a.key AND (a.data_version IS DISTINCT FROM \(published?.version) OR l.id >= \(from.lastID))
            WHERE a.key = \(app) ORDER BY l.id
            """)
        var overlay: BadgeOverlay
        if let published, try found.first?.int64(0) == published.version {
            let firstID = try found.first.flatMap { $0.isNull(1) ? nil : try $0.int64(1) }  // ids ascending; a row without one is alone
            if from.lastID == 0 || firstID == from.lastID {  // the published log, maybe appended to since: read on
                overlay = published.badges
                for row in found where !row.isNull(2) { try overlay.add(row, id: try row.int64(1), column: 2) }
            } else {  // a snapshot older than the node's last commit: all of it
                overlay = BadgeOverlay()
                for row in try await rows("SELECT id, entries FROM badge_log WHERE app = \(app) ORDER BY id") { try overlay.add(row, id: try row.int64(0)) }
            }
        } else if found.allSatisfy({ $0.isNull(1) }) {
            overlay = BadgeOverlay()
        } else {
            let ids = try found.map { try $0.int64(1) }
            if from.firstID == 0 || (ids.first == from.firstID && ids.contains(from.lastID)) {
                overlay = from  // the same log, appended to: read on
                for row in found where !row.isNull(2) { try overlay.add(row, id: try row.int64(1), column: 2) }
            } else {  // folded since, or a snapshot older than the node's: all of it
                overlay = BadgeOverlay()
                for row in try await rows("SELECT id, entries FROM badge_log WHERE app = \(app) ORDER BY id") { try overlay.add(row, id: try row.int64(0)) }
            }
        }
        context.badges = overlay
        return overlay
    }

    /// Folds the badge log into badge_counters (each user's latest counter, once; users forgotten
    /// since are skipped) and empties it, in one transaction: a statement each
    /// ``PostgresStateStore/foldedAtOnce`` counters (each statement has the location's deadline; a million counters in one took 9 s),
    /// then one that empties the log.
    func foldBadgeLog() async throws {
        try checkWritable()
        let overlay = try await badgeOverlay()
        guard overlay.entries > 0 else { return }
        let counters = overlay.counters.sorted()
        let atOnce = max(1, context.store?.foldedAtOnce ?? 50_000)
        for start in stride(from: 0, to: counters.count, by: atOnce) {
            let chunk = counters[start..<min(start + atOnce, counters.count)]
            try await session.query(
                """
                \(unescaped: context.bumping())INSERT INTO badge_counters (app, user_id, badge)
                SELECT \(app), x.k, x.b FROM unnest(\(chunk.map(\.key))::bigint[], \(chunk.map { Int64($0.value) })::bigint[]) AS x(k, b)
                WHERE EXISTS (SELECT 1 FROM users WHERE app = \(app) AND id = x.k)
                ON CONFLICT (app, user_id) DO UPDATE SET badge = excluded.badge
                """)
        }
        try await session.query("\(unescaped: context.bumping())DELETE FROM badge_log WHERE app = \(app)")
        if let kept = context.keptData { kept.badges = BadgeOverlay() } else {
            context.badges = BadgeOverlay()
            context.changeKept { $0.badges = BadgeOverlay() }
        }
    }
}

extension BadgeOverlay {
    /// Adds one log row's entries (``BadgeLogEntries``) from a column of `row`.
    mutating func add(_ row: Cells, id: Int64, column: Int = 1) throws {
        let buffer = try row.row[column].decode(ByteBuffer.self)
        try buffer.withUnsafeReadableBytes { try add($0, id: id) }
    }
}

/// One badge log row as read: its id and its entries (``BadgeLogEntries``).
struct BadgeLogRow: Sendable {
    var id: Int64
    var entries: ByteBuffer
}

extension BadgeLogEntries {
    /// Up to this many user rows are listed with a log row (its `users`), and as the rows a commit's
    /// decisions read: a larger group's row lists none, and is taken as counting everyone.
    static let listedUsers = 256

    /// The user rows a log row of `badges` counts, for its `users` column (`nil`: too many to list).
    static func users(of badges: [(key: UserKey, badge: Int)]) -> [Int64]? {
        badges.count <= listedUsers ? badges.map(\.key.rawValue).sorted() : nil
    }
}
