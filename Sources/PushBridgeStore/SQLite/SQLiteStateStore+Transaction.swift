import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

extension SQLiteStateStore {
    /// One transaction's view of the database. Lives only inside ``SQLiteStateStore/write(_:)`` or ``read(_:)``.
    final class Transaction: PushStateTransaction {
        let connection: SQLiteConnection
        let writable: Bool

        init(_ connection: SQLiteConnection, writable: Bool) {
            self.connection = connection
            self.writable = writable
        }

        func checkWritable() throws {
            guard writable else { throw StoreError(.readOnly, "a change inside a read transaction") }
        }

        // MARK: App configuration

        func app() throws -> AppConfiguration {
            if let shared = connection.sharedApp { return shared }
            var app = AppConfiguration()
            let certificates = try certificatesByID()
            let list = try connection.statement("SELECT certificate_id FROM app_certificates ORDER BY position")
            while try list.step() {
                guard let certificate = certificates[list.int64(0)] else {
                    throw StoreError(.unexpectedValue, "app certificate \(list.int64(0)) does not exist", context: "app_certificates")
                }
                app.certificates.append(certificate)
            }
            let templates = try connection.statement("SELECT name, title_pattern, content_pattern FROM app_templates ORDER BY position")
            while try templates.step() {
                app.templates.append(
                    PushTemplate(name: templates.string(0), titlePattern: templates.optionalString(1), contentPattern: templates.optionalString(2)))
            }
            connection.sharedApp = app
            return app
        }

        func setApp(_ app: AppConfiguration) throws {
            try checkWritable()
            connection.sharedApp = nil
            try connection.execute("DELETE FROM app_certificates; DELETE FROM app_templates")
            for (position, certificate) in app.certificates.enumerated() {
                let id = try certificateID(certificate)
                try connection.statement("INSERT INTO app_certificates (position, certificate_id) VALUES (?, ?)").bind(1, position).bind(2, id).run()
            }
            for (position, template) in app.templates.enumerated() {
                try connection.statement("INSERT INTO app_templates (position, name, title_pattern, content_pattern) VALUES (?, ?, ?, ?)")
                    .bind(1, position).bind(2, template.name).bind(3, template.titlePattern).bind(4, template.contentPattern).run()
            }
        }

        func certificatesByID() throws -> [Int64: Certificate] {
            if let shared = connection.sharedCertificates { return shared }
            var out: [Int64: Certificate] = [:]
            let all = try connection.statement("SELECT id, name, busi_id, bundle_id, environment FROM certificates")
            while try all.step() {
                guard let environment = APNsEnvironment(rawValue: all.string(4)) else {
                    throw StoreError(.unexpectedValue, "environment \"\(all.string(4))\"", context: "certificates.environment")
                }
                out[all.int64(0)] = Certificate(
                    name: all.optionalString(1), busiId: all.optionalString(2), bundleId: all.string(3), environment: environment)
            }
            connection.sharedCertificates = out
            return out
        }

        /// The row id of a certificate, inserting it when new (certificates are interned, never changed).
        func certificateID(_ certificate: Certificate) throws -> Int64 {
            if let (id, _) = try certificatesByID().first(where: { $0.value == certificate }) { return id }
            try connection.statement("INSERT INTO certificates (name, busi_id, bundle_id, environment) VALUES (?, ?, ?, ?)")
                .bind(1, certificate.name).bind(2, certificate.busiId).bind(3, certificate.bundleId).bind(4, certificate.environment.rawValue).run()
            let id = connection.lastInsertRowID
            connection.sharedCertificates?[id] = certificate
            return id
        }

        func certificate(_ id: Int64?, column: String) throws -> Certificate? {
            guard let id else { return nil }
            guard let certificate = try certificatesByID()[id] else {
                throw StoreError(.unexpectedValue, "certificate \(id) does not exist", context: column)
            }
            return certificate
        }

        // MARK: Users

        /// The `users` columns a decision reads, in the order ``readReceiver(_:offset:)`` expects.
        static let receiverColumns = receiverColumns(badge: "ifnull(b.badge, 0)")
        /// ``receiverColumns`` with `badge` as the stored counter's expression.
        static func receiverColumns(badge: String) -> String {
            """
            u.id, u.name, u.configured, u.presence, u.background_since, u.background_grace, \
            \(badge), u.app_remind, u.window_start, u.window_end, u.app_silent_start, u.app_silent_until, u.display_style, \
            u.language, u.one_to_one_sound, u.group_sound, u.time_zone
            """
        }
        static let receiverColumnCount: Int32 = 17
        /// Badge counters live in their own narrow table, so a fan-out rewrites few pages.
        static let badgeJoin = "LEFT JOIN badge_counters b ON b.user_id = u.id"

        /// A query of receivers: ``receiverColumns``, the conversation's settings (`?2` group chat,
        /// `?3` conversation id) and ``deviceColumns``, one row per receiver and device, `extra`
        /// columns after them. Made once per query (each is a `static let`), not per call.
        /// - Parameters:
        ///   - source: what `u` is joined from (ends with `users u`, or is it).
        ///   - userID: the expression of the user's row id (`u.id` unless `u` may be missing).
        ///   - extra: columns read after the devices.
        ///   - filter: the WHERE clause, or empty.
        ///   - order: the ORDER BY list.
        static func receiverQuery(from source: String, userID: String = "u.id", extra: String = "", filter: String = "", order: String) -> String {
            """
            SELECT \(receiverColumns), c.remind, c.silent_start, c.silent_until, \(deviceColumns)\(extra)
            FROM \(source) \(badgeJoin)
            LEFT JOIN conversation_settings c ON c.user_id = \(userID) AND c.group_chat = ?2 AND c.conversation = ?3
            LEFT JOIN devices d ON d.user_id = \(userID)
            \(filter) ORDER BY \(order)
            """
        }
        /// A group's members (`?1`), in position order.
        static let groupReceiversQuery = receiverQuery(
            from: "members m JOIN users u ON u.id = m.user_id", userID: "m.user_id", filter: "WHERE m.group_id = ?1", order: "m.position, d.sequence DESC")
        /// The users named by the JSON array `?1`, in its order; a user not stored has a row of NULLs with its name.
        static let listedReceiversQuery = receiverQuery(
            from: "json_each(?1) j LEFT JOIN users u ON u.name = j.value", extra: ", j.key, j.value", order: "j.key, d.sequence DESC")
        /// One user's row by name, with what only ``user(_:)`` reads.
        static let userQuery = "SELECT \(receiverColumns), u.bound_certificate, u.display_name FROM users u \(badgeJoin) WHERE u.name = ?"
        /// One user by row id (`?1`).
        static let oneReceiverQuery = receiverQuery(from: "users u", filter: "WHERE u.id = ?1", order: "d.sequence DESC")

        func user(_ id: UserID) throws -> UserRecord? {
            try storedUser(id)?.record
        }

        /// A user's whole stored state and its row, kept for one-to-one messages (``KeptUsers``)
        /// when the connection keeps receivers; `nil` when the store has no such user.
        func keptUser(_ id: UserID) throws -> KeptUsers.User? {
            if let kept = connection.keptUsers[id] { return kept }
            guard let user = try storedUser(id) else { return nil }
            connection.keptUsers.keep(user, limit: connection.receiverCacheLimit / 4)
            return user
        }

        /// A user's whole stored state and its row, read now.
        func storedUser(_ id: UserID) throws -> KeptUsers.User? {
            let row = try connection.statement(Self.userQuery)
            row.bind(1, id)
            guard try row.step() else { return nil }
            let key = row.int64(0)
            var (state, configured) = try readReceiver(row, overlay: try badgeOverlay())
            state.boundCertificate = try certificate(row.optionalInt64(17), column: "users.bound_certificate")
            state.displayName = row.optionalString(18)
            let devices = try connection.statement("SELECT \(Self.deviceColumns) FROM devices d WHERE d.user_id = ? ORDER BY d.sequence DESC")
            devices.bind(1, key)
            while try devices.step() { if let device = try device(devices, offset: 0) { state.devices.append(device) } }

            let conversations = try connection.statement(
                "SELECT group_chat, conversation, remind, silent_start, silent_until FROM conversation_settings WHERE user_id = ?")
            conversations.bind(1, key)
            while try conversations.step() {
                let conversation = ConversationKey(conversations.int(0) == 1 ? .group : .oneToOne, conversations.string(1))
                state.conversations[conversation] = try readConversation(conversations, offset: 2)
            }
            let cards = try connection.statement("SELECT group_id, card FROM name_cards WHERE user_id = ?")
            cards.bind(1, key)
            while try cards.step() { state.nameCards[cards.string(0)] = cards.string(1) }
            return KeptUsers.User(key: UserKey(rawValue: key), record: UserRecord(state: state, isConfigured: configured))
        }

        func sender(_ id: UserID, group: String?) throws -> UserState? {
            if connection.receiverCacheLimit > 0 { return try keptUser(id)?.sender(group: group) }
            let row = try connection.statement("SELECT u.id, u.display_name FROM users u WHERE u.name = ?")
            row.bind(1, id)
            guard try row.step() else { return nil }
            let key = row.int64(0)
            var state = UserState(user: id, displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
            state.displayName = row.optionalString(1)
            row.reset()
            if let group {
                let card = try connection.statement("SELECT card FROM name_cards WHERE user_id = ? AND group_id = ?")
                card.bind(1, key).bind(2, group)
                if try card.step() { state.nameCards[group] = card.string(0) }
                card.reset()
            }
            return state
        }

        func save(_ state: UserState, replacing previous: UserState?) throws {
            try checkWritable()
            let bound = try state.boundCertificate.map { try certificateID($0) }
            let (presence, since) = StoredCodes.encode(state.presence)
            let upsert = try connection.statement(
                """
                INSERT INTO users (name, configured, bound_certificate, presence, background_since,
                    background_grace, app_remind, window_start, window_end, app_silent_start, app_silent_until, display_style,
                    display_name, language, one_to_one_sound, group_sound, time_zone)
                VALUES (?1, 1, ?4, ?5, ?6, ?7, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
                ON CONFLICT (name) DO UPDATE SET configured = 1, bound_certificate = ?4,
                    presence = ?5, background_since = ?6, background_grace = ?7, app_remind = ?9, window_start = ?10,
                    window_end = ?11, app_silent_start = ?12, app_silent_until = ?13, display_style = ?14, display_name = ?15,
                    language = ?16, one_to_one_sound = ?17, group_sound = ?18, time_zone = ?19
                RETURNING id
                """)
            upsert.bind(1, state.user).bind(4, bound).bind(5, presence).bind(6, since)
                .bind(7, state.backgroundGraceSeconds).bind(9, state.app.remindType.map(StoredCodes.encode))
                .bind(10, state.app.window?.startMinute).bind(11, state.app.window?.endMinute)
                .bind(12, state.app.silentPeriod?.start.milliseconds).bind(13, state.app.silentPeriod?.until.milliseconds)
                .bind(14, state.displayStyle == .messageSummary ? 1 : 0).bind(15, state.displayName).bind(16, state.language)
                .bind(17, state.oneToOneSound).bind(18, state.groupSound).bind(19, state.timeZone.identifier)
            guard try upsert.step() else { throw StoreError(.sqlite, "the user upsert returned no id", context: upsert.sql) }
            let key = upsert.int64(0)
            try upsert.run()
            try connection.statement("INSERT OR REPLACE INTO badge_counters (user_id, badge) VALUES (?, ?)").bind(1, key).bind(2, state.badge).run()
            if try badgeOverlay().counters[key] != nil { try logBadges([(UserKey(rawValue: key), state.badge)]) }  // the log's entry would win

            // Devices: rewritten in binding order when they changed. A token another user had
            // moves to this one (the token is the key).
            var movedFrom: [Int64] = []
            if previous?.devices != state.devices {
                if !connection.receiverTables.isEmpty || connection.keptUsers.count > 0 {  // their rows are read again below
                    let owner = try connection.statement("SELECT user_id FROM devices WHERE token = ? AND user_id <> ?")
                    for device in state.devices {
                        owner.reset()
                        owner.bind(1, device.token).bind(2, key)
                        if try owner.step() { movedFrom.append(owner.int64(0)) }
                    }
                    owner.reset()
                }
                try connection.statement("DELETE FROM devices WHERE user_id = ?").bind(1, key).run()
                let insert = try connection.statement(
                    """
                    INSERT INTO devices (token, user_id, certificate_id, bound_at, sequence)
                    VALUES (?1, ?2, ?3, ?4, (SELECT ifnull(max(sequence), 0) + 1 FROM devices))
                    ON CONFLICT (token) DO UPDATE SET user_id = excluded.user_id, certificate_id = excluded.certificate_id,
                        bound_at = excluded.bound_at, sequence = excluded.sequence
                    """)
                for device in state.devices.reversed() {  // oldest first: the newest gets the highest sequence
                    insert.reset()
                    try insert.bind(1, device.token).bind(2, key).bind(3, try certificateID(device.certificate))
                        .bind(4, device.boundAt.milliseconds).run()
                }
            }

            // Conversations and name cards: rewrite only the entries that changed.
            let oldConversations = previous?.conversations ?? [:]
            if previous == nil { try connection.statement("DELETE FROM conversation_settings WHERE user_id = ?").bind(1, key).run() }
            for (conversation, _) in oldConversations where state.conversations[conversation] == nil {
                try connection.statement("DELETE FROM conversation_settings WHERE user_id = ? AND group_chat = ? AND conversation = ?")
                    .bind(1, key).bind(2, conversation.kind == .group ? 1 : 0).bind(3, conversation.id).run()
            }
            for (conversation, settings) in state.conversations where !settings.isEmpty && oldConversations[conversation] != settings {
                try connection.statement(
                    """
                    INSERT OR REPLACE INTO conversation_settings (user_id, group_chat, conversation, remind, silent_start, silent_until)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """
                )
                .bind(1, key).bind(2, conversation.kind == .group ? 1 : 0).bind(3, conversation.id).bind(4, settings.remindType.map(StoredCodes.encode))
                .bind(5, settings.silentPeriod?.start.milliseconds).bind(6, settings.silentPeriod?.until.milliseconds).run()
            }
            let oldCards = previous?.nameCards ?? [:]
            if previous == nil { try connection.statement("DELETE FROM name_cards WHERE user_id = ?").bind(1, key).run() }
            for (group, _) in oldCards where state.nameCards[group] == nil {
                try connection.statement("DELETE FROM name_cards WHERE user_id = ? AND group_id = ?").bind(1, key).bind(2, group).run()
            }
            for (group, card) in state.nameCards where oldCards[group] != card {
                try connection.statement("INSERT OR REPLACE INTO name_cards (user_id, group_id, card) VALUES (?, ?, ?)").bind(1, key).bind(2, group).bind(3, card).run()
            }
            for changed in [key] + movedFrom { try refreshKeptReceiver(changed) }
        }

        // MARK: Groups

        func members(of group: String) throws -> [UserID] {
            let list = try connection.statement(
                "SELECT u.name FROM members m JOIN users u ON u.id = m.user_id WHERE m.group_id = ? ORDER BY m.position")
            list.bind(1, group)
            var out: [UserID] = []
            while try list.step() { out.append(list.string(0)) }
            return out
        }

        func setMembers(_ members: [UserID], of group: String) throws {
            try checkWritable()
            connection.receiverTables = connection.receiverTables.filter { $0.key.group != group }
            try connection.statement("DELETE FROM members WHERE group_id = ?").bind(1, group).run()
            guard !members.isEmpty else { return }
            let names = Self.jsonArray(members)
            // Unknown users are created unconfigured; then one insert for the whole list, in order.
            try connection.statement("INSERT INTO users (name) SELECT value FROM json_each(?1) WHERE true ON CONFLICT (name) DO NOTHING")
                .bind(1, bytes: names).run()
            try connection.statement(
                "INSERT INTO members (group_id, position, user_id) SELECT ?1, j.key, u.id FROM json_each(?2) j JOIN users u ON u.name = j.value")
                .bind(1, group).bind(2, bytes: names).run()
        }

        // MARK: Fan-out

        func receivers(of audience: Audience, excluding sender: UserID, conversation: ConversationKey) throws -> StoredReceivers {
            switch audience {
            case .group(let group):
                let tableKey = ReceiverTable.Key(group: group, conversation: conversation)
                if let table = connection.receiverTables[tableKey] { return table.receivers(excluding: sender) }
                // One row per member and device (a member without devices has one row with NULLs),
                // newest binding first: members in position order, each one's devices by index.
                let table = ReceiverTable(rows: try groupReceivers(group, conversation: conversation))
                // A table not kept has no stored roll to share with the next send: no roll.
                return table.receivers(excluding: sender, asRoll: connection.keep(table, for: tableKey))
            case .users(let users):
                let wanted: [UserID]
                if users.count == 1 {  // one-to-one: nothing to deduplicate
                    wanted = users[0] == sender ? [] : users
                } else {
                    var seen = Set<UserID>()
                    wanted = users.filter { $0 != sender && seen.insert($0).inserted }
                }
                guard !wanted.isEmpty else { return StoredReceivers([]) }
                if connection.receiverCacheLimit > 0 {  // each user's whole state, kept for the next message
                    return StoredReceivers(try wanted.map { name in
                        try keptUser(name)?.receiver(in: conversation)
                            ?? StoredReceiver(key: nil, state: UserRecord.placeholder(name).state, isConfigured: false)
                    })
                }
                let rows = try connection.statement(Self.listedReceiversQuery)
                rows.bind(1, bytes: Self.jsonArray(wanted)).bind(2, conversation.kind == .group ? 1 : 0).bind(3, conversation.id)
                let deviceOffset = Self.receiverColumnCount + 3
                let overlay = try badgeOverlay()
                var out: [StoredReceiver] = []
                var lastPosition: Int64 = -1
                while try rows.step() {
                    let position = rows.int64(deviceOffset + 3)
                    if position != lastPosition {
                        lastPosition = position
                        if rows.isNull(0) {
                            let placeholder = UserRecord.placeholder(rows.string(deviceOffset + 4))
                            out.append(StoredReceiver(key: nil, state: placeholder.state, isConfigured: false))
                        } else {
                            out.append(try receiver(rows, conversation: conversation, overlay: overlay))
                        }
                    }
                    if let device = try device(rows, offset: deviceOffset) { out[out.count - 1].state.devices.append(device) }
                }
                return StoredReceivers(out)
            }
        }

        /// Reads rows of ``receiverColumns``, the conversation's settings and ``deviceColumns``, one
        /// row per receiver and device, into one receiver each.
        func receivers(_ rows: Statement, conversation: ConversationKey) throws -> [StoredReceiver] {
            let overlay = try badgeOverlay()
            var out: [StoredReceiver] = []
            while try rows.step() {
                let key = rows.int64(0)
                if out.last?.key?.rawValue != key { out.append(try receiver(rows, conversation: conversation, overlay: overlay)) }
                if let device = try device(rows, offset: Self.receiverColumnCount + 3) { out[out.count - 1].state.devices.append(device) }
            }
            return out
        }

        /// Reads one user's row again into the kept receiver tables that hold it (after a change).
        func refreshKeptReceiver(_ key: Int64) throws {
            connection.keptUsers.forget(key)
            for (tableKey, table) in connection.receiverTables {
                guard let position = table.position(of: key) else { continue }
                let rows = try connection.statement(Self.oneReceiverQuery)
                rows.bind(1, key).bind(2, tableKey.conversation.kind == .group ? 1 : 0).bind(3, tableKey.conversation.id)
                guard let row = try receivers(rows, conversation: tableKey.conversation).first else {
                    connection.receiverTables[tableKey] = nil
                    continue
                }
                table.replace(row, at: position)
            }
        }

        /// The `devices` columns read by ``device(_:offset:)``.
        static let deviceColumns = "d.token, d.certificate_id, d.bound_at"

        /// Reads ``deviceColumns`` starting at `offset`; `nil` for the NULLs of a receiver without devices.
        func device(_ row: Statement, offset: Int32) throws -> Device? {
            guard !row.isNull(offset), let certificate = try certificate(row.int64(offset + 1), column: "devices.certificate_id") else { return nil }
            return Device(token: row.string(offset), certificate: certificate, boundAt: Instant(milliseconds: row.int64(offset + 2)))
        }

        // MARK: Devices and sent messages

        func removeUser(_ id: UserID) throws -> Bool {
            try checkWritable()
            let row = try connection.statement("SELECT id FROM users WHERE name = ?")
            row.bind(1, id)
            guard try row.step() else { return false }
            let key = row.int64(0)
            row.reset()
            connection.receiverTables = connection.receiverTables.filter { $0.value.position(of: key) == nil }
            connection.keptUsers.forget(key)
            if try badgeOverlay().counters[key] != nil { try logBadges([(UserKey(rawValue: key), 0)]) }  // a row id used again starts at 0
            for table in ["devices", "badge_counters", "conversation_settings", "name_cards", "members"] {
                try connection.statement("DELETE FROM \(table) WHERE user_id = ?").bind(1, key).run()
            }
            try connection.statement("DELETE FROM users WHERE id = ?").bind(1, key).run()
            return true
        }

        func owner(ofDevice token: String) throws -> UserID? {
            let row = try connection.statement("SELECT u.name FROM devices d JOIN users u ON u.id = d.user_id WHERE d.token = ?")
            row.bind(1, token)
            return try row.step() ? row.string(0) : nil
        }

        func sentMessage(_ id: String, since cutoff: Instant) throws -> [UInt8]? {
            let row = try connection.statement("SELECT decisions FROM sent_messages WHERE message_id = ? AND sent_at >= ?")
            row.bind(1, id).bind(2, cutoff.milliseconds)
            return try row.step() ? row.bytes(0) : nil
        }

        func storeRoll(_ roll: ReceiverRoll, usedAt: Instant, encoded: () -> [UInt8]) throws -> Int64 {
            try checkWritable()
            let table = connection.receiverTables.values.first { $0.roll === roll }
            if let id = table?.rollID {
                try connection.statement("UPDATE receiver_rolls SET used_at = max(used_at, ?) WHERE id = ?").bind(1, usedAt.milliseconds).bind(2, id).run()
                if connection.changes == 1 { return id }  // else pruned since: stored again
            }
            try connection.statement("INSERT INTO receiver_rolls (used_at) VALUES (?)").bind(1, usedAt.milliseconds).run()
            let id = connection.lastInsertRowID
            try connection.statement("INSERT INTO receiver_roll_rows (roll_id, rows) VALUES (?, ?)").bind(1, id).bind(2, blob: encoded()).run()
            table?.rollID = id
            return id
        }

        func roll(_ id: Int64) throws -> [UInt8]? {
            let row = try connection.statement("SELECT rows FROM receiver_roll_rows WHERE roll_id = ?")
            row.bind(1, id)
            return try row.step() ? row.bytes(0) : nil
        }

        /// Ids per query of ``sentMessages(_:)`` (a shorter list repeats its first id).
        static let sentMessagesPerQuery = 16
        static let selectSentMessages =
            "SELECT message_id, sent_at, decisions FROM sent_messages WHERE message_id IN ("
            + Array(repeating: "?", count: sentMessagesPerQuery).joined(separator: ", ") + ")"

        func sentMessages(_ ids: [(id: String, since: Instant)]) throws -> [[UInt8]?] {
            var found: [String: (sentAt: Int64, decisions: [UInt8])] = [:]
            let many = Self.sentMessagesPerQuery
            var start = 0
            while start < ids.count {
                let chunk = ids[start..<min(start + many, ids.count)]
                let rows = try connection.statement(Self.selectSentMessages)
                for i in 0..<many { rows.bind(Int32(i + 1), chunk[start + min(i, chunk.count - 1)].id) }
                while try rows.step() { found[rows.string(0)] = (rows.int64(1), rows.bytes(2)) }
                start += many
            }
            return ids.map { id, cutoff in found[id].flatMap { $0.sentAt >= cutoff.milliseconds ? $0.decisions : nil } }
        }

        func recordSentMessage(_ id: String, at instant: Instant, decisions: [UInt8], forgettingBefore cutoff: Instant) throws {
            try recordSentMessages([SentMessage(id: id, sentAt: instant, decisions: decisions)], forgettingBefore: cutoff)
        }

        /// Rows per multi-row INSERT (3 parameters each); the rest go one by one.
        static let sentMessagesPerInsert = 16
        static let insertSentMessages = "INSERT OR REPLACE INTO sent_messages (message_id, sent_at, decisions) VALUES "
        static let insertManySentMessages = insertSentMessages + Array(repeating: "(?, ?, ?)", count: sentMessagesPerInsert).joined(separator: ", ")
        static let insertOneSentMessage = insertSentMessages + "(?, ?, ?)"

        func recordSentMessages(_ messages: [SentMessage], forgettingBefore cutoff: Instant) throws {
            try checkWritable()
            // Reads skip records older than their cutoff, so pruning is only for space: at most once
            // per second of message time on this connection, not once per message.
            if cutoff.milliseconds >= connection.sentMessagesPrunedBefore &+ 1_000 {
                try connection.statement("DELETE FROM sent_messages WHERE sent_at < ?").bind(1, cutoff.milliseconds).run()
                // Each roll's time is its latest record's: the rolls of the records just forgotten.
                try connection.statement("DELETE FROM receiver_roll_rows WHERE roll_id IN (SELECT id FROM receiver_rolls WHERE used_at < ?)")
                    .bind(1, cutoff.milliseconds).run()
                try connection.statement("DELETE FROM receiver_rolls WHERE used_at < ?").bind(1, cutoff.milliseconds).run()
                connection.sentMessagesPrunedBefore = cutoff.milliseconds
            }
            // Rows go in order, so a later record with the same id replaces an earlier one.
            let many = Self.sentMessagesPerInsert
            var start = 0
            if messages.count >= many {
                let insert = try connection.statement(Self.insertManySentMessages)
                while messages.count - start >= many {
                    insert.reset()
                    for (i, message) in messages[start..<start + many].enumerated() {
                        insert.bind(Int32(3 * i + 1), message.id).bind(Int32(3 * i + 2), message.sentAt.milliseconds).bind(Int32(3 * i + 3), blob: message.decisions)
                    }
                    try insert.run()
                    start += many
                }
            }
            for message in messages[start...] {
                try connection.statement(Self.insertOneSentMessage).bind(1, message.id).bind(2, message.sentAt.milliseconds).bind(3, blob: message.decisions).run()
            }
        }

        // MARK: Outbox

        func enqueueDeliveries(_ deliveries: [OutboxDelivery]) throws {
            try checkWritable()
            guard !deliveries.isEmpty else { return }
            let insert = try connection.statement(
                """
                INSERT INTO deliveries (message_id, receiver, token, environment, bound_at, headers, payload, queued_at, due_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?8, ?8, ?8)
                """)
            for d in deliveries {
                insert.reset()
                try insert.bind(1, d.messageID).bind(2, d.receiver).bind(3, d.token).bind(4, d.environment.rawValue).bind(5, d.boundAt.milliseconds)
                    .bind(6, blob: OutboxDelivery.encode(d.headers)).bind(7, blob: d.payload).bind(8, d.queuedAt.milliseconds).run()
            }
        }

        func claimDeliveries(dueBy now: Instant, claimUntil: Instant, limit: Int) throws -> [OutboxDelivery] {
            try checkWritable()
            let claim = try connection.statement(
                """
                UPDATE deliveries SET claimed_until = ?1
                WHERE id IN (SELECT id FROM deliveries WHERE state = 0 AND due_at <= ?2 AND claimed_until <= ?2 ORDER BY due_at, id LIMIT ?3)
                RETURNING id, message_id, receiver, token, environment, bound_at, headers, payload, queued_at, attempts
                """)
            claim.bind(1, claimUntil.milliseconds).bind(2, now.milliseconds).bind(3, limit)
            var out: [OutboxDelivery] = []
            while try claim.step() {
                guard let environment = APNsEnvironment(rawValue: claim.string(4)) else {
                    throw StoreError(.unexpectedValue, "environment \"\(claim.string(4))\"", context: "deliveries.environment")
                }
                out.append(
                    OutboxDelivery(
                        id: claim.int64(0), messageID: claim.string(1), receiver: claim.string(2), token: claim.string(3), environment: environment,
                        boundAt: Instant(milliseconds: claim.int64(5)), headers: try OutboxDelivery.decode(claim.bytes(6)), payload: claim.bytes(7),
                        queuedAt: Instant(milliseconds: claim.int64(8)), attempts: claim.int(9)))
            }
            out.sort { $0.id < $1.id }
            return out
        }

        func settleDeliveries(_ settlements: [DeliverySettlement], at now: Instant) throws {
            try checkWritable()
            let update = try connection.statement(
                """
                UPDATE deliveries SET state = ?2, status = ?3, reason = ?4, due_at = coalesce(?5, due_at), claimed_until = 0,
                    attempts = attempts + 1, updated_at = ?6, device_removed = ?7
                WHERE id = ?1 AND state = 0
                """)
            for s in settlements {
                update.reset()
                try update.bind(1, s.id).bind(2, StoredCodes.code(s.state)).bind(3, s.status).bind(4, s.reason).bind(5, s.retryAt?.milliseconds)
                    .bind(6, now.milliseconds).bind(7, s.deviceRemoved ? 1 : 0).run()
            }
        }

        func releaseDeliveryClaims() throws {
            try checkWritable()
            try connection.statement("UPDATE deliveries SET claimed_until = 0 WHERE state = 0 AND claimed_until <> 0").run()
        }

        func nextDeliveryDue() throws -> Instant? {
            let row = try connection.statement("SELECT min(max(due_at, claimed_until)) FROM deliveries WHERE state = 0")
            return try row.step() ? row.optionalInt64(0).map(Instant.init(milliseconds:)) : nil
        }

        func deliveries(ofMessage id: String) throws -> [DeliveryRecord] {
            let rows = try connection.statement(
                "SELECT id, receiver, token, state, attempts, status, reason, updated_at, device_removed FROM deliveries WHERE message_id = ? ORDER BY id")
            rows.bind(1, id)
            var out: [DeliveryRecord] = []
            while try rows.step() {
                out.append(
                    DeliveryRecord(
                        id: rows.int64(0), receiver: rows.string(1), token: rows.string(2), state: try StoredCodes.deliveryState(rows.int(3)),
                        attempts: rows.int(4), status: rows.optionalInt(5), reason: rows.optionalString(6),
                        updatedAt: Instant(milliseconds: rows.int64(7)), deviceRemoved: rows.int(8) == 1))
            }
            return out
        }

        func pruneDeliveries(settledBefore cutoff: Instant) throws -> Int {
            try checkWritable()
            try connection.statement("DELETE FROM deliveries WHERE state <> 0 AND updated_at < ?").bind(1, cutoff.milliseconds).run()
            return Int(sqlite3_changes(connection.handle))
        }

        func outboxCounts() throws -> OutboxCounts {
            let rows = try connection.statement("SELECT state, count(*) FROM deliveries GROUP BY state")
            var counts = OutboxCounts(queued: 0, delivered: 0, failed: 0)
            while try rows.step() {
                switch try StoredCodes.deliveryState(rows.int(0)) {
                case .queued: counts.queued = rows.int(1)
                case .delivered: counts.delivered = rows.int(1)
                case .failed: counts.failed = rows.int(1)
                }
            }
            return counts
        }

        func receiver(_ row: Statement, conversation: ConversationKey, overlay: BadgeOverlay) throws -> StoredReceiver {
            var (state, configured) = try readReceiver(row, overlay: overlay)
            let settings = try readConversation(row, offset: Self.receiverColumnCount)
            if !settings.isEmpty { state.conversations[conversation] = settings }
            return StoredReceiver(key: UserKey(rawValue: row.int64(0)), state: state, isConfigured: configured)
        }

        func setBadges(_ badges: [(key: UserKey, badge: Int)]) throws {
            try checkWritable()
            if try logs(badges) {
                // A group send: one row in the badge log, not one update each (SPEC §10's counters
                // either way); folded into badge_counters past the limit.
                try logBadges(badges)
                if connection.badgeOverlay!.entries > connection.badgeLogLimit { try foldBadgeLog() }
            } else {
                try writeCounters(badges.lazy.map { ($0.key.rawValue, $0.badge) }, skippingForgottenUsers: false)
            }
            for table in connection.receiverTables.values {
                for (key, badge) in badges { if let position = table.position(of: key.rawValue) { table.setBadge(badge, at: position) } }
            }
            connection.keptUsers.setBadges(badges)
        }

        // MARK: Rows

        /// Reads ``receiverColumns`` (from column 0) into a state without devices, conversations,
        /// name cards, bound certificate or display name.
        /// - Parameters:
        ///   - row: the row.
        ///   - overlay: the badge log.
        ///   - storedBadge: the stored counter (badge_counters'), when not read from column 6.
        func readReceiver(_ row: Statement, overlay: BadgeOverlay, storedBadge: Int? = nil) throws -> (UserState, configured: Bool) {
            let name = row.string(1)
            let configured = row.int(2) == 1
            let style: DisplayStyle = row.int(12) == 1 ? .messageSummary : .simpleBanner
            guard let zone = connection.timeZone(named: row.text(16)) else {
                throw StoreError(.unexpectedValue, "time zone \"\(row.string(16))\"", context: "users.time_zone")
            }
            var state = UserState(user: name, displayStyle: style, backgroundGraceSeconds: row.int64(5), timeZone: zone)
            switch row.int(3) {
            case 1: state.presence = .online
            case 2: state.presence = .background(since: Instant(milliseconds: row.int64(4)))
            default: state.presence = .offline
            }
            state.badge = badge(of: row.int64(0), stored: storedBadge ?? row.int(6), in: overlay)
            state.app.remindType = try StoredCodes.decodeRemind(row.optionalInt(7), column: "users.app_remind")
            if let start = row.optionalInt(8), let end = row.optionalInt(9) {
                guard (0..<1440).contains(start), (1...1440).contains(end) else {
                    throw StoreError(.unexpectedValue, "window \(start)–\(end)", context: "users.window_start")
                }
                state.app.window = DoNotDisturbWindow(startMinute: start, endMinute: end)
            }
            if let start = row.optionalInt64(10), let until = row.optionalInt64(11) {
                state.app.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
            }
            state.language = row.optionalString(13)
            state.oneToOneSound = row.optionalString(14)
            state.groupSound = row.optionalString(15)
            return (state, configured)
        }

        /// Reads (remind, silent_start, silent_until) starting at `offset`.
        func readConversation(_ row: Statement, offset: Int32) throws -> ConversationPushSettings {
            var settings = ConversationPushSettings()
            settings.remindType = try StoredCodes.decodeRemind(row.optionalInt(offset), column: "conversation_settings.remind")
            if let start = row.optionalInt64(offset + 1), let until = row.optionalInt64(offset + 2) {
                settings.silentPeriod = SilentPeriod(start: Instant(milliseconds: start), until: Instant(milliseconds: until))
            }
            return settings
        }

        static func jsonArray(_ strings: [String]) -> [UInt8] {
            var w = JSONWriter(capacity: strings.count * 12)
            w.raw("[")
            for (i, s) in strings.enumerated() {
                if i > 0 { w.raw(",") }
                w.string(s)
            }
            w.raw("]")
            return w.bytes
        }
    }
}
