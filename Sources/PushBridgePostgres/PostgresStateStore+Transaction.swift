import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

/// A row read by index, as the SQLite store reads its statements (NULL-aware).
struct Cells {
    let row: PostgresRandomAccessRow

    init(_ row: PostgresRow) { self.row = row.makeRandomAccess() }

    func isNull(_ i: Int) -> Bool { row[i].bytes == nil }
    func int64(_ i: Int) throws -> Int64 { try row[i].decode(Int64.self) }
    func int(_ i: Int) throws -> Int { try row[i].decode(Int.self) }
    func bool(_ i: Int) throws -> Bool { try row[i].decode(Bool.self) }
    func string(_ i: Int) throws -> String { try row[i].decode(String.self) }
    func optionalInt64(_ i: Int) throws -> Int64? { try row[i].decode(Int64?.self) }
    func optionalInt(_ i: Int) throws -> Int? { try row[i].decode(Int?.self) }
    func optionalString(_ i: Int) throws -> String? { try row[i].decode(String?.self) }
    func bytes(_ i: Int) throws -> [UInt8] { Array(buffer: try row[i].decode(ByteBuffer.self)) }
}

extension PostgresStateStore {
    /// One transaction's view of the database; lives only inside ``PostgresStateStore/write(_:)`` or ``read(_:)``.
    final class Transaction: PushStateTransaction {
        let session: PostgresSession
        let writable: Bool
        private var timeZones: [String: TimeZone] = [:]
        private var certificates: [Int64: Certificate]?

        init(_ session: PostgresSession, writable: Bool) {
            self.session = session
            self.writable = writable
        }

        func checkWritable() throws {
            guard writable else { throw StoreError(.readOnly, "a change inside a read transaction") }
        }

        func rows(_ query: PostgresQuery) throws -> [Cells] { try session.query(query).map(Cells.init) }

        // MARK: App configuration

        func app() throws -> AppConfiguration {
            var app = AppConfiguration()
            let certificates = try certificatesByID()
            for row in try rows("SELECT certificate_id FROM app_certificates ORDER BY position") {
                let id = try row.int64(0)
                guard let certificate = certificates[id] else {
                    throw StoreError(.unexpectedValue, "app certificate \(id) does not exist", context: "app_certificates")
                }
                app.certificates.append(certificate)
            }
            for row in try rows("SELECT name, title_pattern, content_pattern FROM app_templates ORDER BY position") {
                app.templates.append(PushTemplate(name: try row.string(0), titlePattern: try row.optionalString(1), contentPattern: try row.optionalString(2)))
            }
            return app
        }

        func setApp(_ app: AppConfiguration) throws {
            try checkWritable()
            try session.query("DELETE FROM app_certificates")
            try session.query("DELETE FROM app_templates")
            for (position, certificate) in app.certificates.enumerated() {
                let id = try certificateID(certificate)
                try session.query("INSERT INTO app_certificates (position, certificate_id) VALUES (\(position), \(id))")
            }
            for (position, template) in app.templates.enumerated() {
                try session.query(
                    "INSERT INTO app_templates (position, name, title_pattern, content_pattern) VALUES (\(position), \(template.name), \(template.titlePattern), \(template.contentPattern))"
                )
            }
        }

        func certificatesByID() throws -> [Int64: Certificate] {
            if let certificates { return certificates }
            var out: [Int64: Certificate] = [:]
            for row in try rows("SELECT id, name, busi_id, bundle_id, environment FROM certificates") {
                guard let environment = APNsEnvironment(rawValue: try row.string(4)) else {
                    throw StoreError(.unexpectedValue, "environment \"\(try row.string(4))\"", context: "certificates.environment")
                }
                out[try row.int64(0)] = Certificate(
                    name: try row.optionalString(1), busiId: try row.optionalString(2), bundleId: try row.string(3), environment: environment)
            }
            certificates = out
            return out
        }

        /// The row id of a certificate, inserting it when new (certificates are interned, never changed).
        func certificateID(_ certificate: Certificate) throws -> Int64 {
            // No other node can intern one meanwhile: every write holds the schema's write lock.
            if let (id, _) = try certificatesByID().first(where: { $0.value == certificate }) { return id }
            let row = try rows(
                "INSERT INTO certificates (name, busi_id, bundle_id, environment) VALUES (\(certificate.name), \(certificate.busiId), \(certificate.bundleId), \(certificate.environment.rawValue)) RETURNING id"
            )
            let id = try row[0].int64(0)
            certificates?[id] = certificate
            return id
        }

        func certificate(_ id: Int64?, column: String) throws -> Certificate? {
            guard let id else { return nil }
            // The rows and the certificates come from one snapshot (or from under the write lock).
            guard let certificate = try certificatesByID()[id] else {
                throw StoreError(.unexpectedValue, "certificate \(id) does not exist", context: column)
            }
            return certificate
        }

        // MARK: Users

        /// The `users` columns a decision reads, in the order ``readReceiver(_:)`` expects.
        static let receiverColumns = """
            u.id, u.name, u.configured, u.presence, u.background_since, u.background_grace, \
            coalesce(b.badge, 0), u.app_remind, u.window_start, u.window_end, u.app_silent_start, u.app_silent_until, u.display_style, \
            u.language, u.one_to_one_sound, u.group_sound, u.time_zone
            """
        static let receiverColumnCount = 17
        static let badgeJoin = "LEFT JOIN badge_counters b ON b.user_id = u.id"
        /// The `devices` columns read by ``device(_:offset:)``.
        static let deviceColumns = "d.token, d.certificate_id, d.bound_at"

        func user(_ id: UserID) throws -> UserRecord? {
            let found = try rows(
                PostgresQuery(
                    unsafeSQL: "SELECT \(Self.receiverColumns), u.bound_certificate, u.display_name FROM users u \(Self.badgeJoin) WHERE u.name = $1",
                    binds: try binds(id)))
            guard let row = found.first else { return nil }
            let key = try row.int64(0)
            var (state, configured) = try readReceiver(row)
            state.boundCertificate = try certificate(try row.optionalInt64(17), column: "users.bound_certificate")
            state.displayName = try row.optionalString(18)
            for device in try rows(
                PostgresQuery(
                    unsafeSQL: "SELECT \(Self.deviceColumns) FROM devices d WHERE d.user_id = $1 ORDER BY d.sequence DESC", binds: try binds(key)))
            {
                if let device = try self.device(device, offset: 0) { state.devices.append(device) }
            }
            for row in try rows(
                "SELECT group_chat, conversation, remind, silent_start, silent_until FROM conversation_settings WHERE user_id = \(key)")
            {
                let conversation = ConversationKey(try row.bool(0) ? .group : .oneToOne, try row.string(1))
                state.conversations[conversation] = try readConversation(row, offset: 2)
            }
            for row in try rows("SELECT group_id, card FROM name_cards WHERE user_id = \(key)") {
                state.nameCards[try row.string(0)] = try row.string(1)
            }
            return UserRecord(state: state, isConfigured: configured)
        }

        func sender(_ id: UserID, group: String?) throws -> UserState? {
            guard let row = try rows("SELECT id, display_name FROM users WHERE name = \(id)").first else { return nil }
            let key = try row.int64(0)
            var state = UserState(user: id, displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
            state.displayName = try row.optionalString(1)
            if let group, let card = try rows("SELECT card FROM name_cards WHERE user_id = \(key) AND group_id = \(group)").first {
                state.nameCards[group] = try card.string(0)
            }
            return state
        }

        func save(_ state: UserState, replacing previous: UserState?) throws {
            try checkWritable()
            let bound = try state.boundCertificate.map { try certificateID($0) }
            let (presence, since) = StoredCodes.encode(state.presence)
            let remind = state.app.remindType.map(StoredCodes.encode)
            let style = state.displayStyle == .messageSummary ? 1 : 0
            let upserted = try rows(
                """
                INSERT INTO users (name, configured, bound_certificate, presence, background_since,
                    background_grace, app_remind, window_start, window_end, app_silent_start, app_silent_until, display_style,
                    display_name, language, one_to_one_sound, group_sound, time_zone)
                VALUES (\(state.user), true, \(bound), \(presence), \(since), \(state.backgroundGraceSeconds), \(remind),
                    \(state.app.window?.startMinute), \(state.app.window?.endMinute), \(state.app.silentPeriod?.start.milliseconds),
                    \(state.app.silentPeriod?.until.milliseconds), \(style), \(state.displayName), \(state.language), \(state.oneToOneSound),
                    \(state.groupSound), \(state.timeZone.identifier))
                ON CONFLICT (name) DO UPDATE SET configured = true, bound_certificate = excluded.bound_certificate,
                    presence = excluded.presence, background_since = excluded.background_since, background_grace = excluded.background_grace,
                    app_remind = excluded.app_remind, window_start = excluded.window_start, window_end = excluded.window_end,
                    app_silent_start = excluded.app_silent_start, app_silent_until = excluded.app_silent_until,
                    display_style = excluded.display_style, display_name = excluded.display_name, language = excluded.language,
                    one_to_one_sound = excluded.one_to_one_sound, group_sound = excluded.group_sound, time_zone = excluded.time_zone
                RETURNING id
                """)
            guard let key = try upserted.first?.int64(0) else { throw StoreError(.postgres, "the user upsert returned no id", context: "users") }
            try session.query(
                "INSERT INTO badge_counters (user_id, badge) VALUES (\(key), \(state.badge)) ON CONFLICT (user_id) DO UPDATE SET badge = excluded.badge")

            // Devices: rewritten in binding order when they changed. A token another user had moves
            // to this one (the token is the key); each binding takes the next sequence number.
            if previous?.devices != state.devices {
                try session.query("DELETE FROM devices WHERE user_id = \(key)")
                for device in state.devices.reversed() {  // oldest first: the newest gets the highest sequence
                    let certificate = try certificateID(device.certificate)
                    try session.query(
                        """
                        INSERT INTO devices (token, user_id, certificate_id, bound_at) VALUES (\(device.token), \(key), \(certificate), \(device.boundAt.milliseconds))
                        ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, certificate_id = excluded.certificate_id,
                            bound_at = excluded.bound_at, sequence = nextval(pg_get_serial_sequence('devices', 'sequence'))
                        """)
                }
            }

            // Conversations and name cards: rewrite only the entries that changed.
            let oldConversations = previous?.conversations ?? [:]
            if previous == nil { try session.query("DELETE FROM conversation_settings WHERE user_id = \(key)") }
            for (conversation, _) in oldConversations where state.conversations[conversation] == nil {
                try session.query(
                    "DELETE FROM conversation_settings WHERE user_id = \(key) AND group_chat = \(conversation.kind == .group) AND conversation = \(conversation.id)")
            }
            for (conversation, settings) in state.conversations where !settings.isEmpty && oldConversations[conversation] != settings {
                try session.query(
                    """
                    INSERT INTO conversation_settings (user_id, group_chat, conversation, remind, silent_start, silent_until)
                    VALUES (\(key), \(conversation.kind == .group), \(conversation.id), \(settings.remindType.map(StoredCodes.encode)),
                        \(settings.silentPeriod?.start.milliseconds), \(settings.silentPeriod?.until.milliseconds))
                    ON CONFLICT (user_id, group_chat, conversation) DO UPDATE SET remind = excluded.remind,
                        silent_start = excluded.silent_start, silent_until = excluded.silent_until
                    """)
            }
            let oldCards = previous?.nameCards ?? [:]
            if previous == nil { try session.query("DELETE FROM name_cards WHERE user_id = \(key)") }
            for (group, _) in oldCards where state.nameCards[group] == nil {
                try session.query("DELETE FROM name_cards WHERE user_id = \(key) AND group_id = \(group)")
            }
            for (group, card) in state.nameCards where oldCards[group] != card {
                try session.query(
                    "INSERT INTO name_cards (user_id, group_id, card) VALUES (\(key), \(group), \(card)) ON CONFLICT (user_id, group_id) DO UPDATE SET card = excluded.card"
                )
            }
        }

        // MARK: Groups

        func members(of group: String) throws -> [UserID] {
            try rows("SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.group_id = \(group) ORDER BY m.position").map { try $0.string(0) }
        }

        func setMembers(_ members: [UserID], of group: String) throws {
            try checkWritable()
            try session.query("DELETE FROM members WHERE group_id = \(group)")
            guard !members.isEmpty else { return }
            // Unknown users are created unconfigured; then one insert for the whole list, in order.
            try session.query("INSERT INTO users (name) SELECT unnest(\(members)::text[]) ON CONFLICT (name) DO NOTHING")
            try session.query(
                """
                INSERT INTO members (group_id, position, user_id)
                SELECT \(group), j.position - 1, u.id FROM unnest(\(members)::text[]) WITH ORDINALITY AS j(name, position) JOIN users u ON u.name = j.name
                """)
        }

        // MARK: Fan-out

        func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
            let deviceOffset = Self.receiverColumnCount + 3
            switch audience {
            case .group(let group):
                let found = try rows(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT \(Self.receiverColumns), c.remind, c.silent_start, c.silent_until, \(Self.deviceColumns)
                            FROM members m JOIN users u ON u.id = m.user_id \(Self.badgeJoin)
                            LEFT JOIN conversation_settings c ON c.user_id = m.user_id AND c.group_chat = $2 AND c.conversation = $3
                            LEFT JOIN devices d ON d.user_id = m.user_id
                            WHERE m.group_id = $1 AND u.name <> $4 ORDER BY m.position, d.sequence DESC
                            """,
                        binds: try binds(group, conversation.kind == .group, conversation.id, sender)))
                var out: [StoredReceiver] = []
                for row in found {
                    let key = try row.int64(0)
                    if out.last?.key?.rawValue != key { out.append(try receiver(row, conversation: conversation)) }
                    if let device = try device(row, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
                }
                return StoredReceivers(out)
            case .users(let users):
                var seen = Set<UserID>()
                let wanted = users.filter { $0 != sender && seen.insert($0).inserted }
                guard !wanted.isEmpty else { return StoredReceivers([]) }
                let found = try rows(
                    PostgresQuery(
                        unsafeSQL: """
                            SELECT \(Self.receiverColumns), c.remind, c.silent_start, c.silent_until, \(Self.deviceColumns), j.position, j.name
                            FROM unnest($1::text[]) WITH ORDINALITY AS j(name, position) LEFT JOIN users u ON u.name = j.name \(Self.badgeJoin)
                            LEFT JOIN conversation_settings c ON c.user_id = u.id AND c.group_chat = $2 AND c.conversation = $3
                            LEFT JOIN devices d ON d.user_id = u.id
                            ORDER BY j.position, d.sequence DESC
                            """,
                        binds: try binds(wanted, conversation.kind == .group, conversation.id)))
                var out: [StoredReceiver] = []
                var lastPosition: Int64 = -1
                for row in found {
                    let position = try row.int64(deviceOffset + 3)
                    if position != lastPosition {
                        lastPosition = position
                        if row.isNull(0) {
                            let placeholder = UserRecord.placeholder(try row.string(deviceOffset + 4))
                            out.append(StoredReceiver(key: nil, state: placeholder.state, isConfigured: false))
                        } else {
                            out.append(try receiver(row, conversation: conversation))
                        }
                    }
                    if let device = try device(row, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
                }
                return StoredReceivers(out)
            }
        }

        /// Reads ``deviceColumns`` starting at `offset`; `nil` for the NULLs of a receiver without devices.
        func device(_ row: Cells, offset: Int) throws -> Device? {
            guard !row.isNull(offset), let certificate = try certificate(try row.int64(offset + 1), column: "devices.certificate_id") else { return nil }
            return Device(token: try row.string(offset), certificate: certificate, boundAt: Instant(milliseconds: try row.int64(offset + 2)))
        }

        func receiver(_ row: Cells, conversation: ConversationKey) throws -> StoredReceiver {
            var (state, configured) = try readReceiver(row)
            let settings = try readConversation(row, offset: Self.receiverColumnCount)
            if !settings.isEmpty { state.conversations[conversation] = settings }
            return StoredReceiver(key: UserKey(rawValue: try row.int64(0)), state: state, isConfigured: configured)
        }

        func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
            try checkWritable()
            guard !badges.isEmpty else { return }
            // One statement for the whole fan-out: two arrays, unnested together.
            try session.query(
                """
                INSERT INTO badge_counters (user_id, badge) SELECT * FROM unnest(\(badges.map(\.key.rawValue))::bigint[], \(badges.map { Int64($0.badge) })::bigint[])
                ON CONFLICT (user_id) DO UPDATE SET badge = excluded.badge
                """)
        }

        // MARK: Devices and sent messages

        func removeUser(_ id: UserID) throws -> Bool {
            try checkWritable()
            guard let key = try rows("SELECT id FROM users WHERE name = \(id)").first?.int64(0) else { return false }
            for table in ["devices", "badge_counters", "conversation_settings", "name_cards", "members"] {
                try session.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table) WHERE user_id = $1", binds: try binds(key)))
            }
            try session.query("DELETE FROM users WHERE id = \(key)")
            return true
        }

        func owner(ofDevice token: String) throws -> UserID? {
            try rows("SELECT u.name FROM devices d JOIN users u ON u.id = d.user_id WHERE d.token = \(token)").first?.string(0)
        }

        func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
            try rows("SELECT decisions FROM sent_messages WHERE message_id = \(id) AND sent_at >= \(cutoff.milliseconds)").first?.bytes(0)
        }

        func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
            try checkWritable()
            try session.query("DELETE FROM sent_messages WHERE sent_at < \(cutoff.milliseconds)")
            try session.query(
                """
                INSERT INTO sent_messages (message_id, sent_at, decisions) VALUES (\(id), \(instant.milliseconds), \(ByteBuffer(bytes: decisions)))
                ON CONFLICT (message_id) DO UPDATE SET sent_at = excluded.sent_at, decisions = excluded.decisions
                """)
        }

        // MARK: Outbox

        func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws {
            try checkWritable()
            guard !deliveries.isEmpty else { return }
            // Arrays per column, unnested together: one statement however many deliveries.
            try session.query(
                """
                INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                SELECT m, r, t, e, b, h, p, q, q, q FROM unnest(
                    \(deliveries.map(\.messageID))::text[], \(deliveries.map(\.receiver))::text[], \(deliveries.map(\.token))::text[],
                    \(deliveries.map(\.environment.rawValue))::text[], \(deliveries.map(\.boundAt.milliseconds))::bigint[],
                    \(deliveries.map { ByteBuffer(bytes: OutboxDelivery.encode($0.headers)) })::bytea[],
                    \(deliveries.map { ByteBuffer(bytes: $0.payload) })::bytea[], \(deliveries.map(\.queuedAt.milliseconds))::bigint[]
                ) AS x(m, r, t, e, b, h, p, q)
                """)
        }

        /// Claims due deliveries; rows another node holds locked are skipped, not waited for.
        func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) throws -> [OutboxDelivery] {
            try checkWritable()
            let claimed = try rows(
                """
                UPDATE deliveries SET claimed_until = \(claimUntil.milliseconds)
                WHERE id IN (
                    SELECT id FROM deliveries WHERE state = 0 AND due_at <= \(now.milliseconds) AND claimed_until <= \(now.milliseconds)
                    ORDER BY due_at, id LIMIT \(limit) FOR UPDATE SKIP LOCKED)
                RETURNING id, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, attempts
                """)
            var out: [OutboxDelivery] = []
            for row in claimed {
                guard let environment = APNsEnvironment(rawValue: try row.string(4)) else {
                    throw StoreError(.unexpectedValue, "environment \"\(try row.string(4))\"", context: "deliveries.environment")
                }
                out.append(
                    OutboxDelivery(
                        id: try row.int64(0), messageID: try row.string(1), receiver: try row.string(2), token: try row.string(3), environment: environment,
                        boundAt: Instant(milliseconds: try row.int64(5)), headers: try OutboxDelivery.decode(try row.bytes(6)), payload: try row.bytes(7),
                        queuedAt: Instant(milliseconds: try row.int64(8)), attempts: try row.int(9)))
            }
            out.sort { $0.id < $1.id }
            return out
        }

        func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws {
            try checkWritable()
            guard !settlements.isEmpty else { return }
            try session.query(
                """
                UPDATE deliveries d SET state = x.s, status = nullif(x.st, -1), reason = CASE WHEN x.hr THEN x.r END,
                    due_at = coalesce(nullif(x.due, -1), d.due_at), claimed_until = 0,
                    attempts = d.attempts + 1, updated_at = \(now.milliseconds), device_removed = x.removed
                FROM unnest(\(settlements.map(\.id))::bigint[], \(settlements.map { Int64(StoredCodes.code($0.state)) })::bigint[],
                    \(settlements.map { Int64($0.status ?? -1) })::bigint[], \(settlements.map { $0.reason ?? "" })::text[],
                    \(settlements.map { $0.reason != nil })::boolean[], \(settlements.map { $0.retryAt?.milliseconds ?? -1 })::bigint[],
                    \(settlements.map(\.deviceRemoved))::boolean[])
                    AS x(id, s, st, r, hr, due, removed)
                WHERE d.id = x.id AND d.state = 0
                """)
        }

        func releaseDeliveryClaims() throws {
            try checkWritable()
            try session.query("UPDATE deliveries SET claimed_until = 0 WHERE state = 0 AND claimed_until <> 0")
        }

        func nextDeliveryDue() throws -> Instant? {
            guard let row = try rows("SELECT min(greatest(due_at, claimed_until)) FROM deliveries WHERE state = 0").first else { return nil }
            return try row.optionalInt64(0).map(Instant.init(milliseconds:))
        }

        func deliveries(ofMessage id: String) throws -> [DeliveryRecord] {
            try rows(
                "SELECT id, receiver, token, state, attempts, status, reason, updated_at, device_removed FROM deliveries WHERE message_id = \(id) ORDER BY id"
            ).map { row in
                DeliveryRecord(
                    id: try row.int64(0), receiver: try row.string(1), token: try row.string(2), state: try StoredCodes.deliveryState(try row.int(3)),
                    attempts: try row.int(4), status: try row.optionalInt(5), reason: try row.optionalString(6),
                    updatedAt: Instant(milliseconds: try row.int64(7)), deviceRemoved: try row.bool(8))
            }
        }

        func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int {
            try checkWritable()
            return try rows("WITH gone AS (DELETE FROM deliveries WHERE state <> 0 AND updated_at < \(cutoff.milliseconds) RETURNING 1) SELECT count(*) FROM gone")
                .first?.int(0) ?? 0
        }

        func outboxCounts() throws -> OutboxCounts {
            var counts = OutboxCounts(queued: 0, delivered: 0, failed: 0)
            for row in try rows("SELECT state, count(*) FROM deliveries GROUP BY state") {
                switch try StoredCodes.deliveryState(try row.int(0)) {
                case .queued: counts.queued = try row.int(1)
                case .delivered: counts.delivered = try row.int(1)
                case .failed: counts.failed = try row.int(1)
                }
            }
            return counts
        }

        // MARK: Rows

        /// Reads ``receiverColumns`` (from column 0) into a state without devices, conversations,
        /// name cards, bound certificate or display name.
        func readReceiver(_ row: Cells) throws -> (UserState, configured: Bool) {
            let zoneName = try row.string(16)
            let zone: TimeZone
            if let cached = timeZones[zoneName] {
                zone = cached
            } else {
                guard let made = TimeZone(identifier: zoneName) else {
                    throw StoreError(.unexpectedValue, "time zone \"\(zoneName)\"", context: "users.time_zone")
                }
                timeZones[zoneName] = made
                zone = made
            }
            let style: DisplayStyle = try row.int(12) == 1 ? .messageSummary : .simpleBanner
            var state = UserState(user: try row.string(1), displayStyle: style, backgroundGraceSeconds: try row.int64(5), timeZone: zone)
            switch try row.int(3) {
            case 1: state.presence = .online
            case 2: state.presence = .background(since: Instant(milliseconds: try row.int64(4)))
            default: state.presence = .offline
            }
            state.badge = try row.int(6)
            state.app.remindType = try StoredCodes.decodeRemind(try row.optionalInt(7), column: "users.app_remind")
            if let start = try row.optionalInt(8), let end = try row.optionalInt(9) {
                guard (0..<1440).contains(start), (1...1440).contains(end) else {
                    throw StoreError(.unexpectedValue, "window \(start)–\(end)", context: "users.window_start")
                }
                state.app.window = DoNotDisturbWindow(startMinute: start, endMinute: end)
            }
            if let start = try row.optionalInt64(10), let until = try row.optionalInt64(11) {
                state.app.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
            }
            state.language = try row.optionalString(13)
            state.oneToOneSound = try row.optionalString(14)
            state.groupSound = try row.optionalString(15)
            return (state, try row.bool(2))
        }

        /// Reads (remind, silent_start, silent_until) starting at `offset`.
        func readConversation(_ row: Cells, offset: Int) throws -> ConversationPushSettings {
            var settings = ConversationPushSettings()
            settings.remindType = try StoredCodes.decodeRemind(try row.optionalInt(offset), column: "conversation_settings.remind")
            if let start = try row.optionalInt64(offset + 1), let until = try row.optionalInt64(offset + 2) {
                settings.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
            }
            return settings
        }

    }
}

/// Bindings for a query whose SQL is built from constants (column lists) and takes `$n` parameters.
func binds(_ values: any PostgresEncodable...) throws -> PostgresBindings {
    var bindings = PostgresBindings()
    for value in values { try bindings.append(value, context: .default) }
    return bindings
}
