import CSQLite
import PushBridgeCore

/// How a group's members are read when no kept table holds them.
enum GroupLoad: Sendable {
    /// Scans for a group that is a large share of the users, the join for the others.
    case automatic
    /// Always the join (``SQLiteStateStore/Transaction/groupReceiversQuery``).
    case join
    /// Always the scans.
    case scan
}

extension SQLiteStateStore.Transaction {
    /// Groups smaller than this are always joined: their rows are few, the scans read every user.
    static let scannedGroupMinimum = 4_096

    /// The users' columns of a scan: ``receiverColumns`` with the counter read apart.
    static let userScanQuery = "SELECT \(receiverColumns(badge: "0")) FROM users u ORDER BY u.id"

    /// A group's members as receivers of `conversation`: what ``groupReceiversQuery`` reads, in its
    /// order (membership order, each member's devices newest first; a member without a user row is
    /// left out, as the join leaves it out).
    ///
    /// A group of at least ``scannedGroupMinimum`` members that is a quarter or more of the users
    /// (and of the devices' row ids) is read by scanning `users`, `badge_counters` and `devices` once
    /// each in row order, and the conversation's settings by their index, then put in membership
    /// order. The join walks five B-tree paths per member (the user, the counter, the settings, the
    /// devices' index and each device): ≈ 40 % of a 100,000-member group's load.
    /// - Parameters:
    ///   - group: the group.
    ///   - conversation: the conversation whose settings each receiver carries.
    func groupReceivers(_ group: String, conversation: ConversationKey) throws -> [StoredReceiver] {
        let chat = conversation.kind == .group ? 1 : 0
        var places = UserRowMap()  // each member's place in membership order, by user row
        let memberRows = try connection.statement("SELECT user_id FROM members WHERE group_id = ? ORDER BY position")
        memberRows.bind(1, group)
        var count = 0
        while try memberRows.step() {
            places.set(count, for: memberRows.int64(0))
            count += 1
        }
        guard try scans(members: count) else {
            let rows = try connection.statement(Self.groupReceiversQuery)
            rows.bind(1, group).bind(2, chat).bind(3, conversation.id)
            return try receivers(rows, conversation: conversation)
        }

        var storedBadges = [Int](repeating: 0, count: count)
        let counters = try connection.statement("SELECT user_id, badge FROM badge_counters ORDER BY user_id")
        while try counters.step() {
            if let place = places[counters.int64(0)] { storedBadges[place] = counters.int(1) }
        }

        let overlay = try badgeOverlay()
        var found: [StoredReceiver?] = Array(repeating: nil, count: count)
        let users = try connection.statement(Self.userScanQuery)
        while try users.step() {
            guard let place = places[users.int64(0)] else { continue }
            let (state, configured) = try readReceiver(users, overlay: overlay, storedBadge: storedBadges[place])
            found[place] = StoredReceiver(key: UserKey(rawValue: users.int64(0)), state: state, isConfigured: configured)
        }

        let settings = try connection.statement(
            "SELECT user_id, remind, silent_start, silent_until FROM conversation_settings WHERE group_chat = ?1 AND conversation = ?2")
        settings.bind(1, chat).bind(2, conversation.id)
        while try settings.step() {
            guard let place = places[settings.int64(0)], found[place] != nil else { continue }
            let read = try readConversation(settings, offset: 1)
            if !read.isEmpty { found[place]!.state.conversations[conversation] = read }
        }

        // Devices in row order, each member's then put newest binding first (the join's `d.sequence DESC`).
        var firstSequences = [Int64](repeating: 0, count: count)
        var laterSequences: [Int: [Int64]] = [:]  // of members with several devices: the others', in row order
        let devices = try connection.statement("SELECT d.user_id, \(Self.deviceColumns), d.sequence FROM devices d")
        var certificate: (id: Int64, value: Certificate)?  // devices mostly share one: no lookup each
        while try devices.step() {
            guard let place = places[devices.int64(0)], found[place] != nil else { continue }
            let certificateID = devices.int64(2)
            if certificate?.id != certificateID {
                certificate = try self.certificate(certificateID, column: "devices.certificate_id").map { (certificateID, $0) }
            }
            guard let certificate else { continue }
            let device = Device(token: devices.string(1), certificate: certificate.value, boundAt: Instant(milliseconds: devices.int64(3)))
            let sequence = devices.int64(4)
            if found[place]!.state.devices.isEmpty {
                firstSequences[place] = sequence
                found[place]!.state.devices = [device]
            } else {
                laterSequences[place, default: []].append(sequence)
                found[place]!.state.devices.append(device)
            }
        }
        for (place, later) in laterSequences {
            let sequences = [firstSequences[place]] + later
            let rowOrder = found[place]!.state.devices
            found[place]!.state.devices = sequences.indices.sorted { sequences[$0] > sequences[$1] }.map { rowOrder[$0] }
        }
        // Every member has a user row (`members.user_id` references it): one array of the exact size.
        return found.contains { $0 == nil } ? found.compactMap { $0 } : found.map { $0! }
    }

    /// Whether a group of `members` is read by scans (``GroupLoad``).
    func scans(members: Int) throws -> Bool {
        switch connection.groupLoad {
        case .join: return false
        case .scan: return true
        case .automatic:
            guard members >= Self.scannedGroupMinimum else { return false }
            let spans = try connection.statement("SELECT (SELECT ifnull(max(id), 0) FROM users), (SELECT ifnull(max(rowid), 0) FROM devices)")
            defer { spans.reset() }
            guard try spans.step() else { return false }
            return Int64(members) * 4 >= spans.int64(0) && Int64(members) * 4 >= spans.int64(1)
        }
    }
}
