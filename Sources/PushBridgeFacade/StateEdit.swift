import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeStore

/// What one edit reads: the app configuration, users, groups (members and profile), users' push
/// bindings and devices' owners. An edit sees only these (``StateEdit/NotRead`` for anything else).
public struct EditScope: Sendable {
    public var app: Bool
    public var users: [UserID]
    public var groups: [String]
    /// Users whose push bindings are read.
    public var bindings: [UserID]
    /// Device tokens whose owner is read (with its record and bindings).
    public var devices: [String]

    public init(app: Bool = false, users: [UserID] = [], groups: [String] = [], bindings: [UserID] = [], devices: [String] = []) {
        self.app = app
        self.users = users
        self.groups = groups
        self.bindings = bindings
        self.devices = devices
    }
}

/// The state an edit read, changed as the facade's calls change the store, with nothing written
/// until the edit ends: a server's request that makes several changes (a vendor's group creation:
/// a profile and members, each user checked) decides them all from one read and commits them
/// together, or none (`PushFacade.edit(_:_:)`). Pure: a value, no store.
public struct StateEdit: Sendable {
    /// Something the edit was asked for that its scope does not read (a mistake of the caller's).
    public struct NotRead: Error, CustomStringConvertible {
        public let description: String
    }

    let registry: DialectRegistry
    private var appConfiguration: AppConfiguration?
    private var appChanged = false
    /// Each user read, as the edit has it now (`nil`: unknown or removed).
    private var users: [UserID: UserRecord?]
    /// Each user as read.
    private var original: [UserID: UserRecord?]
    /// Users to save at the end, in the order first changed.
    private var saved: [UserID] = []
    private var removed: [UserID] = []
    private var groupStates: [String: (members: [UserID], profile: [UInt8]?)]
    private var groupChanges: [StateChanges.GroupChange] = []
    private var bindings: [UserID: [PushBinding]]
    private var bindingChanges: [UserID] = []
    /// Each device read, and its owner now.
    private var owners: [String: UserID?]

    init(keys: EditKeys, snapshot: StateSnapshot, registry: DialectRegistry) {
        self.registry = registry
        appConfiguration = snapshot.app
        var users: [UserID: UserRecord?] = [:]
        for (user, position) in keys.users { users[user] = .some(snapshot.users[position]) }
        var groups: [String: (members: [UserID], profile: [UInt8]?)] = [:]
        for (group, positions) in keys.groups { groups[group] = (snapshot.memberLists[positions.members], snapshot.groupProfiles[positions.profile]) }
        groupStates = groups
        var bindings: [UserID: [PushBinding]] = [:]
        for (user, position) in keys.bindings { bindings[user] = snapshot.bindings[position] }
        var owners: [String: UserID?] = [:]
        for (token, position) in keys.devices {
            let owner = snapshot.deviceOwners[position]
            owners[token] = .some(owner?.user)
            if let owner {
                if users[owner.user] == nil { users[owner.user] = .some(owner.record) }
                if bindings[owner.user] == nil { bindings[owner.user] = owner.bindings }
            }
        }
        self.users = users
        original = users
        self.bindings = bindings
        self.owners = owners
    }

    /// What the edit changed, in the order the store writes it.
    var changes: StateChanges {
        var changes = StateChanges(app: appChanged ? appConfiguration : nil, removedUsers: removed, groups: groupChanges)
        for user in saved {
            guard let record = users[user] ?? nil else { continue }
            let before = removed.contains(user) ? nil : original[user] ?? nil
            changes.users.append(StateChanges.UserChange(state: record.state, previous: before?.isConfigured == true ? before?.state : nil))
        }
        changes.bindings = bindingChanges.map { StateChanges.BindingChange(user: $0, bindings: bindings[$0] ?? []) }
        return changes
    }

    /// A user's push bindings as stored (and as this edit changed them).
    func storedBindings(of user: UserID) throws -> [PushBinding] {
        guard let list = bindings[user] else { throw Self.notRead("the push bindings of \"\(user)\"") }
        return list
    }

    private static func notRead(_ what: String) -> NotRead { NotRead(description: "the edit's scope does not read \(what)") }

    // MARK: App

    /// The app configuration (certificates and templates).
    public func app() throws -> AppConfiguration {
        guard let appConfiguration else { throw Self.notRead("the app configuration") }
        return appConfiguration
    }

    /// Replaces the app configuration.
    public mutating func configure(_ app: AppConfiguration) throws {
        try PushFacade.checkStoredText(of: app)
        appConfiguration = app
        appChanged = true
    }

    // MARK: Users

    /// A user's stored state, `nil` when the store does not know the user.
    public func user(_ user: UserID) throws -> UserRecord? {
        guard let record = users[user] else { throw Self.notRead("user \"\(user)\"") }
        return record
    }

    /// Stores a user's new state (configured from now on).
    private mutating func save(_ state: UserState, of user: UserID) throws {
        try PushFacade.checkStoredText(of: state, at: .root)
        users[user] = .some(UserRecord(state: state, isConfigured: true))
        if !saved.contains(user) { saved.append(user) }
    }

    /// `PushFacade.register(_:dialect:)`.
    @discardableResult
    public mutating func register(_ user: UserID, dialect: String) throws -> Bool {
        let adapter = try registry.adapter(dialect, at: .root)
        try PushFacade.checkUser(user)
        let record = try self.user(user)
        if record?.isConfigured == true { return false }
        try save(PushFacade.state(of: record, user: user, adapter: adapter), of: user)
        return true
    }

    /// `PushFacade.apply(_:dialect:user:)`: all the calls, or (one rejected) none of them.
    public mutating func apply(_ calls: [PushFacade.DialectCall], dialect: String, user: UserID) throws -> [JSONValue?] {
        let adapter = try registry.adapter(dialect, at: .root)
        try PushFacade.checkUser(user)
        var world = PushWorld(app: try app())
        var stored: [UserID: UserState] = [:]
        var results: [JSONValue?] = []
        for item in calls {
            let (call, pointer) = (item.call, item.pointer)
            let name = try adapter.callName(of: call, at: pointer)
            // A call changes its caller, or the user its `user` parameter names (name cards).
            var involved = [user]
            if let named = PushFacade.namedUser(in: call) {
                // Checked before it is used: a store never sees an id that breaks the rule.
                try IdentifierRule.check(named, at: pointer / "user", what: "the member whose name card is set")
                involved.append(named)
            }
            for id in involved where world.users[id] == nil {
                let record = try self.user(id)
                world.users[id] = PushFacade.state(of: record, user: id, adapter: adapter)
                if record?.isConfigured == true { stored[id] = record!.state }
            }
            let context = CallContext(caller: user, at: item.at)
            if adapter.queryCalls.contains(name) {
                results.append(try adapter.query(call, at: pointer, in: world, context: context))
            } else {
                try adapter.apply(call, at: pointer, to: &world, context: context)
                for id in involved { if let state = world.users[id] { try PushFacade.checkStoredText(of: state, at: pointer) } }
                results.append(nil)
            }
        }
        // Save what changed, and the caller even unchanged: a call configures its caller.
        for (id, state) in world.users.sorted(by: { $0.key < $1.key }) where stored[id] != state {
            if id != user && stored[id] == nil && state == PushFacade.state(of: nil, user: id, adapter: adapter) { continue }
            try save(state, of: id)
        }
        return results
    }

    /// `PushFacade.updateUser(_:dialect:_:)`.
    public mutating func updateUser(_ user: UserID, dialect: String, _ change: (inout UserState) throws -> Void) throws {
        let adapter = try registry.adapter(dialect, at: .root)
        try PushFacade.checkUser(user)
        var state = PushFacade.state(of: try self.user(user), user: user, adapter: adapter)
        try change(&state)
        try save(state, of: user)
    }

    /// `PushFacade.setPresence(_:of:dialect:)`.
    public mutating func setPresence(_ presence: Presence, of user: UserID, dialect: String) throws {
        let adapter = try registry.adapter(dialect, at: .root)
        try PushFacade.checkUser(user)
        guard let record = try self.user(user) else {
            throw InputError(.unknownReference, at: JSONPointer.root / "user",
                expected: "a user the store knows (one that made a call or is a group member)", found: "\"\(user)\"")
        }
        var state = PushFacade.state(of: record, user: user, adapter: adapter)
        state.setPresence(presence)
        try save(state, of: user)
    }

    /// `PushFacade.removeUser(_:)`: settings, devices, badge counter and the memberships of the
    /// groups the edit read (the store drops the others).
    public mutating func removeUser(_ user: UserID) throws {
        guard try self.user(user) != nil else {
            throw InputError(.unknownReference, at: JSONPointer.root / "user", expected: "a user the store knows", found: "\"\(user)\"")
        }
        users[user] = .some(nil)
        saved.removeAll { $0 == user }
        if !removed.contains(user) { removed.append(user) }
        for (group, state) in groupStates where state.members.contains(user) { groupStates[group]!.members.removeAll { $0 == user } }
    }

    /// `PushFacade.removeDevice(token:ownedBy:)`.
    @discardableResult
    public mutating func removeDevice(token: String, ownedBy user: UserID? = nil) throws -> UserID {
        let token = token.lowercased()
        guard let read = owners[token] else { throw Self.notRead("the owner of device \(token)") }
        guard let owner = read, user == nil || owner == user, let record = try self.user(owner) else {
            throw InputError(.unknownReference, at: JSONPointer.root / "token",
                expected: user.map { "a device token bound to user \"\($0)\"" } ?? "a device token bound to a user", found: "\"\(token)\"")
        }
        var state = record.state
        state.removeDevice(token: token)
        try save(state, of: owner)
        owners[token] = .some(nil)
        return owner
    }

    /// Removes the devices APNs declared dead, each only while its owner has not bound it again after
    /// its `notBoundAfter` (Specification §13): the devices are in the scope.
    /// - Returns: the devices removed.
    public mutating func removeDeadDevices(_ dead: [PushFacade.DeadDevice]) throws -> [PushFacade.RemovedDevice] {
        var removed: [PushFacade.RemovedDevice] = []
        for device in dead {
            let token = device.token.lowercased()
            guard let read = owners[token] else { throw Self.notRead("the owner of device \(token)") }
            guard let owner = read, let record = try user(owner), let bound = record.state.devices.first(where: { $0.token == token }),
                bound.boundAt <= device.notBoundAfter
            else { continue }
            try removeDevice(token: token, ownedBy: owner)
            removed.append(PushFacade.RemovedDevice(user: owner, token: token, deliveryID: device.deliveryID))
        }
        return removed
    }

    /// `PushFacade.bindPush(user:deviceID:token:notifier:at:dialect:)`: the user's bindings and the
    /// token's device are in the scope.
    @discardableResult
    public mutating func bindPush(user: UserID, deviceID: String, token: String, notifier: String, at: Instant, dialect: String) throws -> PushBinding? {
        let adapter = try registry.adapter(dialect, at: .root)
        try PushFacade.checkUser(user)
        let token = token.lowercased()
        let record = try self.user(user)
        var state = PushFacade.state(of: record, user: user, adapter: adapter)
        var list = try storedBindings(of: user)
        let bound = token.isEmpty || notifier.isEmpty ? nil : PushBinding(deviceID: deviceID, notifier: notifier, token: token)
        // What this call replaces or unbinds: the device's binding for the certificate, or all of its bindings.
        let isReleased = { (binding: PushBinding) in binding.deviceID == deviceID && (notifier.isEmpty || binding.notifier == notifier) }
        let released = list.filter(isReleased)
        list.removeAll(where: isReleased)
        for old in released where old.token != bound?.token { state.removeDevice(token: old.token) }
        if bound == nil && released.isEmpty, state.devices.contains(where: { $0.token == deviceID }) {
            state.removeDevice(token: deviceID)  // an SDK-bound device, named by its token
        }
        if let bound {
            let app = try app()
            guard let certificate = app.certificate(named: notifier) else {
                throw InputError(.unknownReference, at: JSONPointer.root / "notifier_name",
                    expected: "a certificate name listed in the app's certificates (" + app.certificates.compactMap(\.name).joined(separator: ", ") + ")",
                    found: JSONValue.string(notifier).compactText)
            }
            // The token belongs to one user at a time: another user's binding of it goes.
            guard let read = owners[token] else { throw Self.notRead("the owner of device \(token)") }
            if let owner = read, owner != user {
                guard let theirs = bindings[owner] else { throw Self.notRead("the push bindings of \"\(owner)\"") }
                bindings[owner] = theirs.filter { $0.token != token }
                if !bindingChanges.contains(owner) { bindingChanges.append(owner) }
            }
            state.bind(Device(token: token, certificate: certificate, boundAt: at))
            owners[token] = .some(user)
            list.removeAll { $0.token == token }
            list.append(bound)
        }
        try save(state, of: user)
        bindings[user] = list
        if !bindingChanges.contains(user) { bindingChanges.append(user) }
        return bound
    }

    // MARK: Groups

    private func group(_ group: String) throws -> (members: [UserID], profile: [UInt8]?) {
        guard let state = groupStates[group] else { throw Self.notRead("group \"\(group)\"") }
        return state
    }

    /// A group's members in order.
    public func members(of group: String) throws -> [UserID] { try self.group(group).members }

    /// A group's profile, `nil` when it has none.
    public func groupProfile(of group: String) throws -> GroupProfile? {
        try self.group(group).profile.map { try GroupProfile(decoding: $0, group: group) }
    }

    /// Whether a group exists: it has a profile or members.
    public func groupExists(_ group: String) throws -> Bool {
        let state = try self.group(group)
        return state.profile != nil || !state.members.isEmpty
    }

    /// Records a group change, folding it into the group's earlier change in this edit.
    private mutating func change(_ group: String, members: [UserID]? = nil, profile: [UInt8]?? = nil) {
        if let members { groupStates[group]!.members = members }
        if let profile { groupStates[group]!.profile = profile }
        if let i = groupChanges.firstIndex(where: { $0.group == group }) {
            if let members { groupChanges[i].members = members }
            if let profile { groupChanges[i].profile = profile }
        } else {
            groupChanges.append(StateChanges.GroupChange(group: group, members: members, profile: profile))
        }
    }

    /// `PushFacade.setMembers(_:of:)`.
    public mutating func setMembers(_ members: [UserID], of group: String) throws {
        try PushFacade.checkMembers(members, of: group)
        _ = try self.group(group)
        change(group, members: members)
    }

    /// `PushFacade.addMembers(_:to:)`: the members after the change.
    @discardableResult
    public mutating func addMembers(_ members: [UserID], to group: String) throws -> [UserID] {
        try PushFacade.checkMembers(members, of: group)
        var all = try self.group(group).members
        let present = Set(all)
        all += members.filter { !present.contains($0) }
        change(group, members: all)
        return all
    }

    /// `PushFacade.setGroupProfile(_:of:)`.
    public mutating func setGroupProfile(_ profile: GroupProfile, of group: String) throws {
        try PushFacade.checkGroup(group)
        _ = try self.group(group)
        change(group, profile: .some(profile.encoded))
    }

    /// `PushFacade.deleteGroup(_:)`: whether the group existed.
    @discardableResult
    public mutating func deleteGroup(_ group: String) throws -> Bool {
        let existed = try groupExists(group)
        change(group, members: [], profile: .some(nil))
        return existed
    }
}

/// Where each key of an ``EditScope`` is in the snapshot.
struct EditKeys: Sendable {
    var users: [(UserID, Int)] = []
    var groups: [(String, (members: Int, profile: Int))] = []
    var bindings: [(UserID, Int)] = []
    var devices: [(String, Int)] = []

    /// Adds a scope's keys to `keys`.
    init(_ scope: EditScope, into keys: inout StateKeys) {
        if scope.app { keys.addApp() }
        users = scope.users.map { ($0, keys.addUser($0)) }
        groups = scope.groups.map { ($0, (keys.addMembers(of: $0), keys.addProfile(of: $0))) }
        bindings = scope.bindings.map { ($0, keys.addBindings(of: $0)) }
        devices = scope.devices.map { ($0.lowercased(), keys.addOwner(ofDevice: $0.lowercased())) }
    }
}
