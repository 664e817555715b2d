import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

// Devices bound the way Easemob / Agora Chat REST binds them (Specification §14): by device id and
// certificate name, onto the same devices `bindDeviceToken` makes.
extension PushFacade {
    /// A user's devices as push bindings: the ones bound through vendor REST with their device id,
    /// then every other device with its token as its device id (an SDK bound it; no id is known).
    /// - Parameter user: the user.
    public func pushBindings(of user: UserID) async throws -> [PushBinding] {
        try await reading(EditScope(users: [user], bindings: [user])) { try $0.pushBindings(of: user) }
    }

    /// Binds or unbinds as `PUT …/users/{u}/push/binding` does: a token and a certificate name bind
    /// that device (replacing the device's earlier token for that certificate); an empty token
    /// unbinds the device for that certificate; an empty certificate name unbinds every binding of
    /// the device. A device id that is a token of the user's (as ``pushBindings(of:)`` lists devices
    /// bound by an SDK) names that device.
    /// - Parameters:
    ///   - user: a user the store knows.
    ///   - deviceID: the install's device id, non-empty.
    ///   - token: the device token (hex), or empty.
    ///   - notifier: the certificate name, or empty.
    ///   - at: when (the device's binding time).
    ///   - dialect: whose defaults the user gets if only known as a member.
    /// - Returns: the binding made, or `nil` after an unbind.
    /// - Throws: `InputError` (`unknown-reference` at `/notifier_name` for an unknown certificate).
    @discardableResult
    public func bindPush(user: UserID, deviceID: String, token: String, notifier: String, at: Instant, dialect: String) async throws -> PushBinding? {
        try await edit(Self.bindingScope(user: user, token: token)) {
            try $0.bindPush(user: user, deviceID: deviceID, token: token, notifier: notifier, at: at, dialect: dialect)
        }
    }

    /// What a binding reads: the app, the user and its bindings, and the token's device.
    public static func bindingScope(user: UserID, token: String) -> EditScope {
        EditScope(app: true, users: [user], bindings: [user], devices: token.isEmpty ? [] : [token])
    }
}
