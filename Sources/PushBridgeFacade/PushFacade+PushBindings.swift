import PushBridgeCore
import PushBridgeJSON
import PushBridgeStore

// Devices bound the way Easemob / Agora Chat REST binds them (Specification §14): by device id and
// certificate name, onto the same devices `bindDeviceToken` makes.
extension PushFacade {
    /// A user's devices as push bindings: the ones bound through vendor REST with their device id,
    /// then every other device with its token as its device id (an SDK bound it; no id is known).
    /// - Parameter user: the user.
    public func pushBindings(of user: UserID) throws -> [PushBinding] {
        try store.read { transaction in
            guard let record = try transaction.user(user) else { return [] }
            let devices = record.state.devices
            let kept = try transaction.pushBindings(of: user).filter { binding in devices.contains { $0.token == binding.token } }
            let others = devices.filter { device in !kept.contains { $0.token == device.token } }.map {
                PushBinding(deviceID: $0.token, notifier: $0.certificate.name ?? $0.certificate.busiId ?? "", token: $0.token)
            }
            return kept + others
        }
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
    public func bindPush(user: UserID, deviceID: String, token: String, notifier: String, at: Instant, dialect: String) throws -> PushBinding? {
        let adapter = try adapter(dialect)
        try Self.checkUser(user)
        let token = token.lowercased()
        return try store.write { transaction in
            let record = try transaction.user(user)
            var state = Self.state(of: record, user: user, adapter: adapter)
            var bindings = try transaction.pushBindings(of: user)
            let bound = token.isEmpty || notifier.isEmpty ? nil : PushBinding(deviceID: deviceID, notifier: notifier, token: token)
            // What this call replaces or unbinds: the device's binding for the certificate, or all of its bindings.
            let isReleased = { (binding: PushBinding) in binding.deviceID == deviceID && (notifier.isEmpty || binding.notifier == notifier) }
            let released = bindings.filter(isReleased)
            bindings.removeAll(where: isReleased)
            for old in released where old.token != bound?.token { state.removeDevice(token: old.token) }
            if bound == nil && released.isEmpty, state.devices.contains(where: { $0.token == deviceID }) {
                state.removeDevice(token: deviceID)  // an SDK-bound device, named by its token
            }
            if let bound {
                let app = try transaction.app()
                guard let certificate = app.certificate(named: notifier) else {
                    throw InputError(.unknownReference, at: JSONPointer.root / "notifier_name",
                        expected: "a certificate name listed in the app's certificates (" + app.certificates.compactMap(\.name).joined(separator: ", ") + ")",
                        found: JSONValue.string(notifier).compactText)
                }
                // The token belongs to one user at a time: another user's binding of it goes.
                if let owner = try transaction.owner(ofDevice: token), owner != user {
                    try transaction.setPushBindings(try transaction.pushBindings(of: owner).filter { $0.token != token }, of: owner)
                }
                state.bind(Device(token: token, certificate: certificate, boundAt: at))
                bindings.removeAll { $0.token == token }
                bindings.append(bound)
            }
            try Self.checkStoredText(of: state, at: .root)
            try transaction.save(state, replacing: record?.isConfigured == true ? record?.state : nil)
            try transaction.setPushBindings(bindings, of: user)
            return bound
        }
    }
}
