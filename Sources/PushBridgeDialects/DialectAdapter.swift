import Foundation
import PushBridgeCore
import PushBridgeJSON

/// Every user's canonical state plus the app configuration: what dialect calls act on.
public struct PushWorld: Hashable, Sendable {
    public var app: AppConfiguration
    public var users: [UserID: UserState]

    public init(app: AppConfiguration, users: [UserID: UserState] = [:]) {
        self.app = app
        self.users = users
    }

    /// Binds a device to a user (Specification §10): the user gets it as the newest binding, and any other
    /// user in this world that had the token loses it (one token is one app install).
    /// - Parameters:
    ///   - device: the device as bound now.
    ///   - user: the caller's state (written back to the world by the adapter).
    public mutating func bind(_ device: Device, to user: inout UserState) {
        for (id, other) in users where id != user.user && other.devices.contains(where: { $0.token == device.token }) {
            users[id]?.removeDevice(token: device.token)
        }
        user.bind(device)
    }
}

/// When and on whose behalf a call is made.
public struct CallContext: Sendable {
    /// The user whose `calls` list holds the call.
    public var caller: UserID
    /// When the call is made.
    public var at: Instant
    public init(caller: UserID, at: Instant) {
        self.caller = caller
        self.at = at
    }
}

/// Who sends a message to whom, and when.
public struct MessageContext: Sendable {
    public var sender: UserID
    public var receiver: UserID
    public var now: Instant
    public init(sender: UserID, receiver: UserID, now: Instant) {
        self.sender = sender
        self.receiver = receiver
        self.now = now
    }
}

/// Who a dialect message is from and to, read from the message alone (the facade's fan-out).
public struct MessageAddress: Hashable, Sendable {
    /// The sender the message names, if it names one.
    public var sender: UserID?
    public var audience: Audience
    /// A targeted group message's receivers (Tencent `receiverList` / REST `To_Account`): only
    /// these members get it; `nil` for every member.
    public var only: [UserID]?
    public init(sender: UserID?, audience: Audience, only: [UserID]? = nil) {
        self.sender = sender
        self.audience = audience
        self.only = only
    }
}

/// One vendor dialect: its calls, queries and message shape, mapped onto canonical state.
///
/// Adding a vendor means one type conforming to this protocol (in its own folder), its
/// `Mappings/<id>.json` and its fixtures, and listing it in ``DialectRegistry/standard``.
public protocol DialectAdapter: Sendable {
    /// The dialect id (`easemob-legacy`, …), also the id of its profile.
    var id: String { get }
    /// The output shape this dialect's apps parse.
    var profile: Profile { get }
    /// The setting calls the dialect defines.
    var settingCalls: [String] { get }
    /// The query calls the dialect defines.
    var queryCalls: [String] { get }
    /// Every message field the dialect accepts, as paths (`ext.em_apns_ext.em_push_sound`).
    var messageFields: [String] { get }

    /// A user with this dialect's defaults (display style, background grace).
    func newUser(_ user: UserID, timeZone: TimeZone) -> UserState

    /// Applies one setting call. Validates fully before changing anything: a rejected call
    /// leaves `world` as it was.
    /// - Parameters:
    ///   - call: the call object (`{"call": name, …params}`, without `at`).
    ///   - pointer: where the call is in its document.
    ///   - world: the state to change.
    ///   - context: caller and time.
    func apply(_ call: JSONValue, at pointer: JSONPointer, to world: inout PushWorld, context: CallContext) throws

    /// Answers one query call from canonical state, whatever dialect wrote it.
    func query(_ call: JSONValue, at pointer: JSONPointer, in world: PushWorld, context: CallContext) throws -> JSONValue

    /// Reads who a message in this dialect's shape is from and to, without reading the rest.
    /// - Parameters:
    ///   - json: the message.
    ///   - pointer: where it is in its document.
    func address(of json: JSONValue, at pointer: JSONPointer) throws -> MessageAddress

    /// The same one-to-one message addressed to another user, with another id (a push task sends one
    /// message to each of its receivers); the rest of it untouched.
    /// - Parameters:
    ///   - json: a one-to-one message in this dialect's shape (a group message is bad input).
    ///   - pointer: where it is in its document.
    ///   - receiver: the user it goes to.
    ///   - id: its new message id.
    func readdressed(_ json: JSONValue, at pointer: JSONPointer, to receiver: UserID, id: String) throws -> JSONValue

    /// Reads a message in this dialect's shape into canonical form.
    func message(_ json: JSONValue, at pointer: JSONPointer, context: MessageContext) throws -> PushMessage

    /// Writes the setup calls that bring a new user of this dialect to `state` (translation).
    ///
    /// What the dialect cannot express is recorded in `output` as a loss. Presence and the badge
    /// counter are scenario-level and are written by the translator, not here.
    func writeSetup(of state: UserState, into output: inout TranslationOutput)

    /// Writes a canonical message in this dialect's shape (translation), recording what it cannot carry.
    func writeMessage(_ message: PushMessage, into output: inout TranslationOutput) -> JSONValue
}

extension DialectAdapter {
    /// The call name of a call object, checked against the dialect's calls.
    public func callName(of call: JSONValue, at pointer: JSONPointer, allowQueries: Bool = true) throws -> String {
        let reader = try FieldReader(call, at: pointer, what: "a call object {\"call\": name, …}")
        let all = settingCalls + (allowQueries ? queryCalls : [])
        let expected = (id.first.map { "aeiou".contains($0) } == true ? "an " : "a ") + "\(id) call: one of " + all.joined(separator: ", ")
        let name = try reader.string("call", expected: expected)
        guard all.contains(name) else {
            throw InputError(.unknownCall, at: pointer / "call", expected: expected, found: "\"\(name)\"")
        }
        return name
    }

    /// The call name of a query call object; a setting call here is bad input at `pointer/call`.
    public func queryName(of call: JSONValue, at pointer: JSONPointer) throws -> String {
        let name = try callName(of: call, at: pointer)
        guard queryCalls.contains(name) else {
            throw InputError(.invalidValue, at: pointer / "call", expected: "a query call: one of " + queryCalls.joined(separator: ", "),
                found: "\"\(name)\"")
        }
        return name
    }

    /// The state of a user, created with this dialect's defaults when new.
    public func user(_ id: UserID, in world: PushWorld) -> UserState {
        world.users[id] ?? newUser(id, timeZone: UserState.utc)
    }
}
