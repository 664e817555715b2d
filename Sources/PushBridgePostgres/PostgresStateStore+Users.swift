import Foundation
import NIOCore
import PostgresNIO
import PushBridgeCore
import PushBridgeStore

// Users and their devices: read a user or a sender, save a state, remove a user, find a token's owner.

extension PostgresStateStore.Transaction {
    /// The `users` columns a decision reads, in the order ``readReceiver(_:)`` expects.
    static let receiverColumns = ReceiverColumn.sql(badge: "coalesce(b.badge, 0)")
    static let receiverColumnCount = ReceiverColumn.count
    static let badgeJoin = "LEFT JOIN badge_counters b ON b.app = u.app AND b.user_id = u.id"
    /// The `devices` columns read by ``device(_:offset:)``.
    static let deviceColumns = DeviceColumn.sql

    /// A user's record (`nil`: no such user), read as ``users(_:)`` reads several.
    func user(_ id: UserID) async throws -> UserRecord? {
        try await users([id])[0]
    }

    /// Several users' records, in the order asked (`nil`: no such user): four statements whatever
    /// their number (users, devices, conversation settings, name cards). Each name's row is found by
    /// its key (as ``oneToOneReceivers(_:conversation:)`` finds them): `name = ANY(…)` over a push
    /// task's page of 750 names was planned as a scan of every app's users (20 ms a page at 100,000 users).
    func users(_ ids: [UserID]) async throws -> [UserRecord?] {
        guard !ids.isEmpty else { return [] }
        let found = try await rows(
            PostgresQuery(
                unsafeSQL: "SELECT \(Self.receiverColumns), \(UserDetailColumn.sql) \(Self.usersNamed(columns: "*")) \(Self.badgeJoin)",
                binds: try binds(app, Array(Set(ids)))))
        guard !found.isEmpty else { return ids.map { _ in nil } }
        let overlay = try await badgeOverlay()
        var states: [Int64: (state: UserState, configured: Bool)] = [:]
        var keys: [UserID: Int64] = [:]
        for row in found {
            let stored = ReceiverRow(row)
            let key = try stored.key()
            var (state, configured) = try readReceiver(row)
            state.badge = overlay.badge(of: key, stored: state.badge)
            let details = try stored.details()
            state.boundCertificate = try await certificate(details.boundCertificate, column: "users.bound_certificate")
            state.displayName = details.displayName
            states[key] = (state, configured)
            keys[state.user] = key
        }
        let foundKeys = Array(states.keys)
        for row in try await rows(
            PostgresQuery(
                unsafeSQL: "SELECT d.user_id, \(Self.deviceColumns) FROM devices d WHERE d.app = $1 AND d.user_id = ANY($2) ORDER BY d.user_id, d.sequence DESC",
                binds: try binds(app, foundKeys)))
        {
            if let device = try await self.device(row, offset: 1) { states[try row.int64(0)]?.state.devices.append(device) }
        }
        for row in try await rows(
            PostgresQuery(
                unsafeSQL: "SELECT user_id, group_chat, conversation, remind, silent_start, silent_until FROM conversation_settings WHERE app = $1 AND user_id = ANY($2)",
                binds: try binds(app, foundKeys)))
        {
            let conversation = ConversationKey(try row.bool(1) ? .group : .oneToOne, try row.string(2))
            states[try row.int64(0)]?.state.conversations[conversation] = try readConversation(row, offset: 3)
        }
        for row in try await rows(PostgresQuery(unsafeSQL: "SELECT user_id, group_id, card FROM name_cards WHERE app = $1 AND user_id = ANY($2)", binds: try binds(app, foundKeys))) {
            states[try row.int64(0)]?.state.nameCards[try row.string(1)] = try row.string(2)
        }
        return ids.map { id in keys[id].flatMap { states[$0] }.map { UserRecord(state: $0.state, isConfigured: $0.configured) } }
    }

    /// Which of `ids` are users with a record, in one statement.
    func existingUsers(_ ids: [UserID]) async throws -> Set<UserID> {
        guard !ids.isEmpty else { return [] }
        let query = "SELECT u.name \(Self.usersNamed(columns: "name"))"
        return Set(try await rows(PostgresQuery(unsafeSQL: query, binds: try binds(app, Array(Set(ids))))).map { try $0.string(0) })
    }

    /// `FROM` the rows (`u`, with `columns`) of the users named in `$2` (`text[]`) of app `$1`, each
    /// found by its key: the lateral form keeps a generic or stale plan from scanning every app's users.
    static func usersNamed(columns: String) -> String {
        "FROM unnest($2::text[]) AS j(name) CROSS JOIN LATERAL (SELECT \(columns) FROM users WHERE name = j.name AND app = $1 OFFSET 0) u"
    }

    func sender(_ id: UserID, group: String?) async throws -> UserState? {
        let key = PostgresStateStore.KeptOneToOne.SenderKey(name: id, group: group)
        if let kept = context.keptData?.users.senders[key] { return kept }
        let sender = try await readSender(id, group: group)
        context.keptData?.users.keep(sender: sender, key)
        return sender
    }

    /// A sender's display name and the group's name card, read now.
    private func readSender(_ id: UserID, group: String?) async throws -> UserState? {
        guard let row = try await rows("SELECT id, display_name FROM users WHERE app = \(app) AND name = \(id)").first else { return nil }
        let key = try row.int64(0)
        var state = UserState(user: id, displayStyle: .simpleBanner, backgroundGraceSeconds: 0)
        state.displayName = try row.optionalString(1)
        if let group, let card = try await rows("SELECT card FROM name_cards WHERE app = \(app) AND user_id = \(key) AND group_id = \(group)").first {
            state.nameCards[group] = try card.string(0)
        }
        return state
    }

    func save(_ state: UserState, replacing previous: UserState?) async throws {
        try checkWritable()
        context.changeKept { $0.users.forget(state.user) }
        var bound: Int64?
        if let certificate = state.boundCertificate { bound = try await certificateID(certificate) }
        let (presence, since) = StoredCodes.encode(state.presence)
        let remind = state.app.remindType.map(StoredCodes.encode)
        let style = state.displayStyle == .messageSummary ? 1 : 0
        let upserted = try await rows(
            """
            \(unescaped: context.bumping())INSERT INTO users (app, name, configured, bound_certificate, presence, background_since,
                background_grace, app_remind, window_start, window_end, app_silent_start, app_silent_until, display_style,
                display_name, language, one_to_one_sound, group_sound, time_zone)
            VALUES (\(app), \(state.user), true, \(bound), \(presence), \(since), \(state.backgroundGraceSeconds), \(remind),
                \(state.app.window?.startMinute), \(state.app.window?.endMinute), \(state.app.silentPeriod?.start.milliseconds),
                \(state.app.silentPeriod?.until.milliseconds), \(style), \(state.displayName), \(state.language), \(state.oneToOneSound),
                \(state.groupSound), \(state.timeZone.identifier))
            ON CONFLICT (app, name) DO UPDATE SET configured = true, bound_certificate = excluded.bound_certificate,
                presence = excluded.presence, background_since = excluded.background_since, background_grace = excluded.background_grace,
                app_remind = excluded.app_remind, window_start = excluded.window_start, window_end = excluded.window_end,
                app_silent_start = excluded.app_silent_start, app_silent_until = excluded.app_silent_until,
                display_style = excluded.display_style, display_name = excluded.display_name, language = excluded.language,
                one_to_one_sound = excluded.one_to_one_sound, group_sound = excluded.group_sound, time_zone = excluded.time_zone
            RETURNING id
            """)
        guard let key = try upserted.first?.int64(0) else { throw StoreError(.postgres, "the user upsert returned no id", context: "users") }
        try await saveCounter(UserKey(rawValue: key), state.badge)

        // Devices: rewritten in binding order when they changed. A token another user had moves
        // to this one (the token is the key); each binding takes the next sequence number.
        var movedFrom: [Int64] = []
        if previous?.devices != state.devices {
            // Their rows are dropped from what the node keeps (stable while the gate is held).
            if context.holdsWriteLock, let kept = context.store?.kept, !kept.receivers.isEmpty {
                movedFrom = try await rows("SELECT DISTINCT user_id FROM devices WHERE app = \(app) AND token = ANY(\(state.devices.map(\.token))::text[]) AND user_id <> \(key)")
                    .map { try $0.int64(0) }
            }
            try await session.query("DELETE FROM devices WHERE app = \(app) AND user_id = \(key)")
            for device in state.devices.reversed() {  // oldest first: the newest gets the highest sequence
                let certificate = try await certificateID(device.certificate)
                try await session.query(
                    """
                    INSERT INTO devices (app, token, user_id, certificate_id, bound_at)
                    VALUES (\(app), \(device.token), \(key), \(certificate), \(device.boundAt.milliseconds))
                    ON CONFLICT (app, token) DO UPDATE SET user_id = excluded.user_id, certificate_id = excluded.certificate_id,
                        bound_at = excluded.bound_at, sequence = nextval(pg_get_serial_sequence('devices', 'sequence'))
                    """)
            }
        }

        // Conversations and name cards: rewrite only the entries that changed, in a fixed order (the
        // same change sends the same statements; a dictionary's order is not fixed).
        let oldConversations = previous?.conversations ?? [:]
        if previous == nil { try await session.query("DELETE FROM conversation_settings WHERE app = \(app) AND user_id = \(key)") }
        let byKey = { (a: (key: ConversationKey, value: ConversationPushSettings), b: (key: ConversationKey, value: ConversationPushSettings)) in
            (a.key.kind == .group ? 1 : 0, a.key.id) < (b.key.kind == .group ? 1 : 0, b.key.id)
        }
        for (conversation, _) in oldConversations.sorted(by: byKey) where state.conversations[conversation] == nil {
            try await session.query(
                "DELETE FROM conversation_settings WHERE app = \(app) AND user_id = \(key) AND group_chat = \(conversation.kind == .group) AND conversation = \(conversation.id)")
        }
        for (conversation, settings) in state.conversations.sorted(by: byKey) where !settings.isEmpty && oldConversations[conversation] != settings {
            try await session.query(
                """
                INSERT INTO conversation_settings (app, user_id, group_chat, conversation, remind, silent_start, silent_until)
                VALUES (\(app), \(key), \(conversation.kind == .group), \(conversation.id), \(settings.remindType.map(StoredCodes.encode)),
                    \(settings.silentPeriod?.start.milliseconds), \(settings.silentPeriod?.until.milliseconds))
                ON CONFLICT (app, user_id, group_chat, conversation) DO UPDATE SET remind = excluded.remind,
                    silent_start = excluded.silent_start, silent_until = excluded.silent_until
                """)
        }
        let oldCards = previous?.nameCards ?? [:]
        if previous == nil { try await session.query("DELETE FROM name_cards WHERE app = \(app) AND user_id = \(key)") }
        for (group, _) in oldCards.sorted(by: { $0.key < $1.key }) where state.nameCards[group] == nil {
            try await session.query("DELETE FROM name_cards WHERE app = \(app) AND user_id = \(key) AND group_id = \(group)")
        }
        for (group, card) in state.nameCards.sorted(by: { $0.key < $1.key }) where oldCards[group] != card {
            try await session.query(
                """
                INSERT INTO name_cards (app, user_id, group_id, card) VALUES (\(app), \(key), \(group), \(card))
                ON CONFLICT (app, user_id, group_id) DO UPDATE SET card = excluded.card
                """)
        }
        if !movedFrom.isEmpty { context.changeKept { $0.users.removeAll() } }
        for changed in [key] + movedFrom { dropKeptReceiver(changed) }
    }

    func removeUser(_ id: UserID) async throws -> Bool {
        try checkWritable()
        guard let key = try await rows("SELECT id FROM users WHERE app = \(app) AND name = \(id)").first?.int64(0) else { return false }
        context.changeKept { kept in
            kept.receivers.tables = kept.receivers.tables.filter { $0.value.position(of: key) == nil }
            kept.users.forget(id)
        }
        for table in ["devices", "badge_counters", "conversation_settings", "name_cards", "members"] {
            try await session.query(PostgresQuery(unsafeSQL: context.bumping() + "DELETE FROM \(table) WHERE app = $1 AND user_id = $2", binds: try binds(app, key)))  // the first moves the data version
        }
        try await session.query("DELETE FROM users WHERE app = \(app) AND id = \(key)")
        try await session.query("DELETE FROM push_bindings WHERE app = \(app) AND user_name = \(id)")
        try await session.query("DELETE FROM push_label_users WHERE app = \(app) AND user_name = \(id)")
        try await session.query("DELETE FROM user_attributes WHERE app = \(app) AND user_name = \(id)")
        return true
    }

    func pushBindings(of user: UserID) async throws -> [PushBinding] {
        try await rows("SELECT device_id, notifier, token FROM push_bindings WHERE app = \(app) AND user_name = \(user) ORDER BY position").map {
            PushBinding(deviceID: try $0.string(0), notifier: try $0.string(1), token: try $0.string(2))
        }
    }

    func setPushBindings(_ bindings: [PushBinding], of user: UserID) async throws {
        try checkWritable()
        try await session.query("DELETE FROM push_bindings WHERE app = \(app) AND user_name = \(user)")
        guard !bindings.isEmpty else { return }
        try await session.query(
            """
            INSERT INTO push_bindings (app, user_name, position, device_id, notifier, token)
            SELECT \(app), \(user), j.position - 1, j.device_id, j.notifier, j.token
            FROM unnest(\(bindings.map(\.deviceID))::text[], \(bindings.map(\.notifier))::text[], \(bindings.map(\.token))::text[])
                WITH ORDINALITY AS j(device_id, notifier, token, position)
            """)
    }

    func owner(ofDevice token: String) async throws -> UserID? {
        try await rows("SELECT u.name FROM devices d JOIN users u ON u.app = d.app AND u.id = d.user_id WHERE d.app = \(app) AND d.token = \(token)").first?.string(0)
    }
}
