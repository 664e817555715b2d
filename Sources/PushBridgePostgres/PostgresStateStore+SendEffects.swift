import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeRecordCoding
import PushBridgeStore

// What sends change, written in one statement (one round trip): the badge counters as one badge log
// row, the outbox rows and the sent-message records, each a data-modifying `WITH` of one INSERT.

extension PostgresStateStore.Transaction {
    func writeSendEffects(badges: [(key: UserKey, badge: Int)], deliveries: [OutboxDelivery], records: [SentMessage], forgettingBefore cutoff: Instant) async throws {
        try checkWritable()
        if !records.isEmpty { try await pruneSentMessages(before: cutoff) }
        var statement = EffectsStatement()
        let logged = !badges.isEmpty
        if logged {
            // One row in the badge log, not one update each (Specification §10's counters either way), with the
            // user rows it counts; it moves no data version: a node reads the log on from where it
            // was (migration `2026-11-26-postgres-counters-logged`).
            let entries = try statement.bind(ByteBuffer(bytes: BadgeLogEntries.write(badges)))
            let users = try BadgeLogEntries.users(of: badges).map { try statement.bind($0) + "::bigint[]" } ?? "NULL"
            statement.parts.append("logged AS (INSERT INTO badge_log (app, entries, users) VALUES (\(app), \(entries), \(users)) RETURNING id)")
        }
        if !deliveries.isEmpty {
            statement.parts.append(
                """
                queued AS (INSERT INTO deliveries (app, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                    SELECT \(app), m, r, t, e, b, h, p, q, q, q FROM unnest(
                        \(try statement.bind(deliveries.map(\.messageID)))::text[], \(try statement.bind(deliveries.map(\.receiver)))::text[],
                        \(try statement.bind(deliveries.map(\.token)))::text[], \(try statement.bind(deliveries.map(\.environment.rawValue)))::text[],
                        \(try statement.bind(deliveries.map(\.boundAt.milliseconds)))::bigint[],
                        \(try statement.bind(deliveries.map { ByteBuffer(bytes: OutboxDelivery.encode($0.headers)) }))::bytea[],
                        \(try statement.bind(deliveries.map { ByteBuffer(bytes: $0.payload) }))::bytea[], \(try statement.bind(deliveries.map(\.queuedAt.milliseconds)))::bigint[]
                    ) AS x(m, r, t, e, b, h, p, q))
                """)
        }
        if !records.isEmpty {
            // A later record with the same id replaces an earlier one (one row may change once per statement).
            let kept = records.latestOfEachID()
            statement.parts.append(
                """
                recorded AS (INSERT INTO sent_messages (app, message_id, sent_at, decisions)
                    SELECT \(app), x.* FROM unnest(\(try statement.bind(kept.map(\.id)))::text[], \(try statement.bind(kept.map(\.sentAt.milliseconds)))::bigint[],
                        \(try statement.bind(kept.map { ByteBuffer(bytes: $0.decisions) }))::bytea[]) AS x
                    ON CONFLICT (app, message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions)
                """)
        }
        guard !statement.parts.isEmpty else { return }
        let found = try await rows(statement.query(final: logged ? "SELECT id FROM logged" : "SELECT 1"))
        // The records read with the write lock stay this transaction's view of them.
        for record in records where context.records != nil { context.records?[record.id] = .some(PostgresStateStore.StoredSentMessage(sentAt: record.sentAt.milliseconds, decisions: record.decisions)) }
        guard logged else { return }
        let id = try found[0].int64(0)
        if let kept = context.keptData { kept.badges?.add(badges, id: id) } else {
            context.badges?.add(badges, id: id)
            context.changeKept { $0.badges?.add(badges, id: id) }
        }
        context.changeKept { $0.counted(badges) }
        // Folded into badge_counters past either limit.
        if let store = context.store, await store.logIsFull(try badgeOverlay(), adding: 0) { try await foldBadgeLog() }
    }

    /// A saved user's counter (the save moves the data version anyway): in place, unless the badge
    /// log has the user, whose entry would win — then one log row, as a send's.
    func saveCounter(_ key: UserKey, _ badge: Int) async throws {
        let badges = [(key: key, badge: badge)]
        let overlay = try await badgeOverlay()
        if BadgeOverlay.logs(badges, overlay: { overlay }) {
            return try await writeSendEffects(badges: badges, deliveries: [], records: [], forgettingBefore: Instant(milliseconds: .min))
        }
        try await session.query(
            """
            INSERT INTO badge_counters (app, user_id, badge) VALUES (\(app), \(key.rawValue), \(Int64(badge)))
            ON CONFLICT (app, user_id) DO UPDATE SET badge = excluded.badge
            """)
        context.changeKept { $0.counted(badges) }
    }

    func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) async throws {
        try checkWritable()
        // With records, the effects' statement prunes; without, pruning is all there is to do.
        if messages.isEmpty { try await pruneSentMessages(before: cutoff) } else { try await writeSendEffects(badges: [], deliveries: [], records: messages, forgettingBefore: cutoff) }
    }

    /// Forgets records sent before `cutoff` and the rolls only they used: at most once per second of
    /// message time per store on this node (reads skip records older than their cutoff, so pruning is
    /// only for space, as in SQLite's store).
    func pruneSentMessages(before cutoff: Instant) async throws {
        // Its pruning time is kept under the write lock (the store's, as the transaction began).
        let prunedBefore = max(context.holdsWriteLock ? context.store?.sentMessagesPrunedBefore ?? .min : .min, context.prunedBefore)
        guard PostgresStateStore.pruningIsDue(before: cutoff, prunedBefore: prunedBefore) else { return }
        // Each roll's time is its latest record's: the rolls of the records just forgotten go too.
        try await session.query(
            """
            WITH rolls AS (DELETE FROM receiver_rolls WHERE app = \(app) AND used_at < \(cutoff.milliseconds))
            DELETE FROM sent_messages WHERE app = \(app) AND sent_at < \(cutoff.milliseconds)
            """)
        context.prunedBefore = cutoff.milliseconds
        if context.holdsWriteLock { context.changeStore { $0.sentMessagesPrunedBefore = max($0.sentMessagesPrunedBefore, cutoff.milliseconds) } }
    }
}

extension PostgresStateStore {
    /// Whether records sent before `cutoff` are due to be pruned, the last pruning having been up to
    /// `prunedBefore` (epoch ms): at most once per second of message time (reads skip older records anyway).
    static func pruningIsDue(before cutoff: Instant, prunedBefore: Int64) -> Bool {
        cutoff.milliseconds >= prunedBefore &+ 1_000
    }
}

extension [SentMessage] {
    /// One record an id, the latest (one statement may change a row once), in the order of the latest.
    func latestOfEachID() -> [SentMessage] {
        var last: [String: Int] = [:]
        for (i, message) in enumerated() { last[message.id] = i }
        return indices.filter { last[self[$0].id] == $0 }.map { self[$0] }
    }
}

/// One statement of data-modifying `WITH` parts and their parameters.
struct EffectsStatement {
    /// `name AS (…)`, in order.
    var parts: [String] = []
    private var bindings = PostgresBindings()

    /// Binds a value; returns its placeholder.
    mutating func bind(_ value: some PostgresThrowingDynamicTypeEncodable) throws -> String {
        try bindings.append(value)
        return "$\(bindings.count)"
    }

    /// The statement: the parts, then `final`.
    func query(final: String) -> PostgresQuery {
        PostgresQuery(unsafeSQL: "WITH " + parts.joined(separator: ",\n") + "\n" + final, binds: bindings)
    }
}
