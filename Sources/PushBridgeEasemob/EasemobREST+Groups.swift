import PushBridgeCore
import PushBridgeDialects
import PushBridgeJSON
import PushBridgeVendorREST

// Easemob / Agora Chat group REST (Specification §14; vendor REST facts §1, §3, §7): request bodies read
// into what the service writes, with errors naming the JSON pointer.
extension EasemobREST {
    /// The most users one batch add, batch remove or batch block names.
    public static let maximumGroupBatch = 60
    /// A group whose `maxusers` is above this gets no offline push (both vendors say so).
    public static let largeGroupThreshold = 3000
    /// The member limit a group gets when `maxusers` is absent.
    public static let defaultMaxUsers = 200
    /// The largest `maxusers` accepted.
    public static let maximumMaxUsers = 100_000

    /// A group as `POST /chatgroups` creates it.
    public struct GroupCreation: Sendable {
        /// `groupname` (may be empty).
        public var name: String
        /// `owner`.
        public var owner: String
        /// `members`, the owner left out, in order.
        public var members: [String]
        /// `maxusers`.
        public var maxUsers: Int
        /// The vendor's other fields as the answers give them (`description`, `public`, …).
        public var fields: JSONObject
    }

    /// `POST /{org}/{app}/chatgroups`: `groupname`, `description` (or the earlier `desc`), `public`
    /// (required by Easemob, not by Agora Chat), `maxusers` (a number, or Agora's string), `owner`,
    /// `members`, `allowinvites`, `membersonly`, `invite_need_confirm`, `approval` (earlier), `avatar`, `custom`.
    /// - Parameters:
    ///   - body: the request body.
    ///   - publicRequired: whether `public` must be given (Easemob).
    public static func groupCreation(_ body: JSONValue, publicRequired: Bool) throws -> GroupCreation {
        let r = try FieldReader(body, at: .root, what: "a group {\"groupname\", \"public\", \"maxusers\", \"owner\", \"members\", …}")
        try r.allowOnly(
            ["groupname", "avatar", "description", "desc", "public", "maxusers", "allowinvites", "membersonly", "invite_need_confirm", "approval", "owner",
             "members", "custom", "scale"],
            context: "a group")
        let name = try r.optionalString("groupname", expected: "the group name, at most 128 characters") ?? ""
        try limit(name, 128, at: .root / "groupname")
        var description = try r.optionalString("description", expected: "the description, at most 512 characters")
        if description == nil { description = try r.optionalString("desc", expected: "the description (earlier spelling of description), at most 512 characters") }
        try limit(description ?? "", 512, at: .root / (r.has("description") ? "description" : "desc"))
        guard r.has("public") || !publicRequired else {
            throw InputError(.missingKey, at: .root / "public", expected: "public, true or false (group must contain public field!)")
        }
        let isPublic = try r.optionalBool("public") ?? false
        let maxUsers = try self.maxUsers(r) ?? defaultMaxUsers
        let owner = try r.string("owner", expected: "the owner's username (owner must be provided)", allowEmpty: false)
        try IdentifierRule.check(owner, at: .root / "owner", what: "a username")
        let members = try r.has("members") ? usernames(r, "members", maximum: maximumMaxUsers) : []
        if let i = members.firstIndex(of: owner) {
            throw InputError(.invalidValue, at: .root / "members" / i, expected: "members other than the owner", found: JSONValue.string(owner).compactText)
        }
        let avatar = try r.optionalString("avatar", expected: "the avatar URL, at most 1024 characters")
        try limit(avatar ?? "", 1024, at: .root / "avatar")
        let custom = try r.optionalString("custom", expected: "custom data, at most 8 KB")
        if let custom, custom.utf8.count > 8192 { throw InputError(.outOfRange, at: .root / "custom", expected: "at most 8192 bytes", found: "\(custom.utf8.count) bytes") }
        let approval = try r.optionalBool("approval")
        var fields: [(key: String, value: JSONValue)] = [
            ("description", .string(description ?? "")), ("public", .bool(isPublic)),
            // Public groups are created with allowinvites false (vendor facts §1).
            ("allowinvites", .bool(isPublic ? false : try r.optionalBool("allowinvites") ?? false)),
            ("membersonly", .bool(try r.optionalBool("membersonly") ?? approval ?? false)),
            ("invite_need_confirm", .bool(try r.optionalBool("invite_need_confirm") ?? true)),
            ("avatar", .string(avatar ?? "")), ("custom", .string(custom ?? "")),
        ]
        if r.has("scale") { fields.append(("scale", .string(try r.string("scale", expected: "\"normal\" or \"large\"")))) }
        return GroupCreation(name: name, owner: owner, members: members, maxUsers: maxUsers, fields: JSONObject(fields))
    }

    /// A change of `PUT /chatgroups/{id}`: the fields to set, or `newowner` (a transfer).
    public struct GroupChange: Sendable {
        /// `groupname`, when given.
        public var name: String?
        /// `maxusers`, when given.
        public var maxUsers: Int?
        /// The vendor's other fields to set.
        public var fields: [(key: String, value: JSONValue)]
        /// `newowner`: the member who becomes the owner.
        public var newOwner: String?
        /// The keys given, in order (the answer says `true` for each).
        public var keys: [String]
    }

    /// `PUT /{org}/{app}/chatgroups/{id}`: `{"newowner"}` alone, or any of `groupname`, `description`,
    /// `maxusers`, `membersonly`, `allowinvites`, `invite_need_confirm`, `public`, `avatar`, `custom`.
    public static func groupChange(_ body: JSONValue) throws -> GroupChange {
        let r = try FieldReader(body, at: .root, what: "a group change {\"groupname\", \"description\", \"maxusers\", …} or {\"newowner\"}")
        if r.has("newowner") {
            try r.allowOnly(["newowner"], context: "an owner transfer")
            let owner = try r.string("newowner", expected: "the new owner's username", allowEmpty: false)
            try IdentifierRule.check(owner, at: .root / "newowner", what: "a username")
            return GroupChange(name: nil, maxUsers: nil, fields: [], newOwner: owner, keys: ["newowner"])
        }
        let known = ["groupname", "description", "maxusers", "membersonly", "allowinvites", "invite_need_confirm", "public", "avatar", "custom"]
        try r.allowOnly(known, context: "a group change")
        var change = GroupChange(name: nil, maxUsers: nil, fields: [], newOwner: nil, keys: [])
        for key in known where r.has(key) {
            change.keys.append(key)
            switch key {
            case "groupname":
                change.name = try r.string(key, expected: "the group name, at most 128 characters")
                try limit(change.name!, 128, at: .root / key)
            case "maxusers": change.maxUsers = try maxUsers(r)
            case "description", "avatar", "custom":
                let text = try r.string(key, expected: "a string")
                try limit(text, key == "custom" ? 8192 : key == "avatar" ? 1024 : 512, at: .root / key)
                change.fields.append((key, .string(text)))
            default: change.fields.append((key, .bool(try r.bool(key))))
            }
        }
        guard !change.keys.isEmpty else { throw InputError(.missingKey, at: .root, expected: "at least one field to change, or newowner") }
        return change
    }

    /// `{"usernames": [u, …]}` of a batch add or block: 1–60 distinct usernames.
    public static func groupBatch(_ body: JSONValue) throws -> [String] {
        let r = try FieldReader(body, at: .root, what: "{\"usernames\": [username, …]}")
        try r.allowOnly(["usernames"], context: "a batch of users")
        return try usernames(r, "usernames", maximum: maximumGroupBatch)
    }

    /// The users a path segment names: `u` or `u1,u2,…` (1–60, distinct).
    /// - Parameters:
    ///   - segment: the path segment.
    ///   - name: the segment's name, for errors (`{username}`).
    public static func pathUsers(_ segment: String, name: String = "{username}") throws -> [String] {
        let users = segment.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard users.count <= maximumGroupBatch else {
            throw InputError(.outOfRange, at: .root, expected: "at most \(maximumGroupBatch) users in \(name) (kickMember: kickMembers number more than maxSize : 60)",
                found: "\(users.count) users")
        }
        var seen = Set<String>()
        for user in users {
            guard !user.isEmpty else { throw InputError(.invalidValue, at: .root, expected: "\(name): comma-separated, non-empty usernames", found: JSONValue.string(segment).compactText) }
            try IdentifierRule.check(user, at: .root, what: "a username in \(name)")
            guard seen.insert(user).inserted else { throw InputError(.invalidValue, at: .root, expected: "\(name): each username once", found: JSONValue.string(user).compactText) }
        }
        return users
    }

    /// `?pagenum=` (from 1, default 1) and `?pagesize=` (1–1000, default 1000) of a member list.
    public static func memberPage(pagenum: String?, pagesize: String?) throws -> (number: Int, size: Int) {
        (try queryNumber(pagenum, "pagenum", 1...1_000_000, default: 1), try queryNumber(pagesize, "pagesize", 1...1000, default: 1000))
    }

    /// A whole-number query parameter in `range`, `value` when absent or empty.
    static func queryNumber(_ text: String?, _ name: String, _ range: ClosedRange<Int>, default value: Int) throws -> Int {
        guard let text, !text.isEmpty else { return value }
        guard let n = Int(text), range.contains(n) else {
            throw InputError(.outOfRange, at: .root, expected: "?\(name)= \(range.lowerBound)–\(range.upperBound)", found: JSONValue.string(text).compactText)
        }
        return n
    }

    /// `GET /chatgroups` paging: `limit` 1–100 (default 10) and the `cursor` an earlier answer gave
    /// (its position in the app's groups, in id order).
    /// - Throws: `InputError` for a limit out of range or a cursor this service did not make.
    public static func groupListPage(limit: String?, cursor: String?) throws -> (offset: Int, limit: Int) {
        let size = try queryNumber(limit, "limit", 1...100, default: 10)
        guard let cursor, !cursor.isEmpty else { return (0, size) }
        guard let bytes = StrictBase64.url.decode(cursor), let text = String(validating: bytes, as: UTF8.self),
            text.hasPrefix("chatgroups:"), let offset = Int(text.dropFirst("chatgroups:".count)), offset >= 0
        else {
            throw InputError(.invalidValue, at: .root, expected: "?cursor= as an earlier answer gave it", found: JSONValue.string(cursor).compactText)
        }
        return (offset, size)
    }

    /// The `cursor` of the page that starts at `offset`.
    public static func groupListCursor(offset: Int) -> String {
        StrictBase64.url.encode(Array("chatgroups:\(offset)".utf8))
    }

    /// A group id as Easemob makes them: 15 decimal digits.
    public static func newGroupID() -> String {
        String(UInt64.random(in: 100_000_000_000_000...999_999_999_999_999))
    }

    static func maxUsers(_ r: FieldReader) throws -> Int? {
        let expected = "maxusers, the member limit 1–\(maximumMaxUsers) (a number, or a string of digits)"
        guard let value = r.value("maxusers") else { return nil }
        let n: Int?
        switch value {
        case .int(let i): n = Int(exactly: i)
        case .string(let s): n = Int(s)  // Agora Chat documents it as a String
        default: n = nil
        }
        guard let n, (1...maximumMaxUsers).contains(n) else {
            throw InputError(.invalidValue, at: .root / "maxusers", expected: expected, found: value.briefDescription)
        }
        return n
    }

    static func usernames(_ r: FieldReader, _ key: String, maximum: Int) throws -> [String] {
        try distinctIDs(r, key, maximum: maximum, noun: "username", plural: "usernames")
    }

    static func limit(_ text: String, _ count: Int, at pointer: JSONPointer) throws {
        guard text.count <= count else { throw InputError(.outOfRange, at: pointer, expected: "at most \(count) characters", found: "\(text.count) characters") }
    }
}
