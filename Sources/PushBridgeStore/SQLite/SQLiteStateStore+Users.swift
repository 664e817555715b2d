import Foundation
import CSQLite
import PushBridgeCore
import PushBridgeJSON

// Users and their devices: read a user or a sender, save a state, remove a user, find a token's owner.

extension SQLiteStateStore.Transaction {
    /// The `users` columns a decision reads, in the order ``readReceiver(_:offset:)`` expects.
    static let receiverColumns = receiverColumns(badge: "ifnull(b.badge, 0)")
    /// ``receiverColumns`` with `badge` as the stored counter's expression.
    static func receiverColumns(badge: String) -> String { ReceiverColumn.sql(badge: badge) }
    static let receiverColumnCount = Int32(ReceiverColumn.count)
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
    static let userQuery = "SELECT \(receiverColumns), \(UserDetailColumn.sql) FROM users u \(badgeJoin) WHERE u.name = ?"
    /// One user by row id (`?1`).
    static let oneReceiverQuery = receiverQuery(from: "users u", filter: "WHERE u.id = ?1", order: "d.sequence DESC")

    func user(_ id: UserID) throws -> UserRecord? {
        try storedUser(id)?.record
    }

    /// A user's whole stored state and its row, kept for one-to-one messages (``KeptUsers``)
    /// when the connection keeps receivers; `nil` when the store has no such user.
    func keptUser(_ id: UserID) throws -> KeptUsers.User? {
        if let kept = connection.receivers.users[id] { return kept }
        guard let user = try storedUser(id) else { return nil }
        connection.receivers.keep(user)
        return user
    }

    /// A user's whole stored state and its row, read now.
    func storedUser(_ id: UserID) throws -> KeptUsers.User? {
        let row = try connection.statement(Self.userQuery)
        row.bind(1, id)
        guard try row.step() else { return nil }
        let stored = ReceiverRow(SQLiteRow(row))
        let key = try stored.key()
        var (state, configured) = try readReceiver(row, overlay: try badgeOverlay())
        let details = try stored.details()
        state.boundCertificate = try certificate(details.boundCertificate, column: "users.bound_certificate")
        state.displayName = details.displayName
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
        if connection.receivers.limit > 0 { return try keptUser(id)?.sender(group: group) }
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
            if !connection.receivers.isEmpty {  // their rows are read again below
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

    func removeUser(_ id: UserID) throws -> Bool {
        try checkWritable()
        let row = try connection.statement("SELECT id FROM users WHERE name = ?")
        row.bind(1, id)
        guard try row.step() else { return false }
        let key = row.int64(0)
        row.reset()
        connection.receivers.tables = connection.receivers.tables.filter { $0.value.position(of: key) == nil }
        connection.receivers.users.forget(key)
        if try badgeOverlay().counters[key] != nil { try logBadges([(UserKey(rawValue: key), 0)]) }  // a row id used again starts at 0
        for table in ["devices", "badge_counters", "conversation_settings", "name_cards", "members"] {
            try connection.statement("DELETE FROM \(table) WHERE user_id = ?").bind(1, key).run()
        }
        try connection.statement("DELETE FROM users WHERE id = ?").bind(1, key).run()
        try connection.statement("DELETE FROM push_bindings WHERE user_name = ?").bind(1, id).run()
        try connection.statement("DELETE FROM push_label_users WHERE user_name = ?").bind(1, id).run()
        try connection.statement("DELETE FROM user_attributes WHERE user_name = ?").bind(1, id).run()
        return true
    }

    func pushBindings(of user: UserID) throws -> [PushBinding] {
        let list = try connection.statement("SELECT device_id, notifier, token FROM push_bindings WHERE user_name = ? ORDER BY position")
        list.bind(1, user)
        var out: [PushBinding] = []
        while try list.step() { out.append(PushBinding(deviceID: list.string(0), notifier: list.string(1), token: list.string(2))) }
        return out
    }

    func setPushBindings(_ bindings: [PushBinding], of user: UserID) throws {
        try checkWritable()
        try connection.statement("DELETE FROM push_bindings WHERE user_name = ?").bind(1, user).run()
        let insert = try connection.statement("INSERT INTO push_bindings (user_name, position, device_id, notifier, token) VALUES (?, ?, ?, ?, ?)")
        for (position, binding) in bindings.enumerated() {
            try insert.bind(1, user).bind(2, position).bind(3, binding.deviceID).bind(4, binding.notifier).bind(5, binding.token).run()
        }
    }

    func owner(ofDevice token: String) throws -> UserID? {
        let row = try connection.statement("SELECT u.name FROM devices d JOIN users u ON u.id = d.user_id WHERE d.token = ?")
        row.bind(1, token)
        return try row.step() ? row.string(0) : nil
    }
}
