import PushBridgeCore

/// One device a user bound through Easemob / Agora Chat REST (`PUT …/users/{u}/push/binding`):
/// the app install's device id, the certificate name it named, and the token it bound.
public struct PushBinding: Hashable, Sendable {
    /// The vendor's `device_id`: one app install.
    public var deviceID: String
    /// The vendor's `notifier_name`: the certificate name.
    public var notifier: String
    /// The APNs device token, hex, lower case.
    public var token: String

    /// - Parameters:
    ///   - deviceID: the install's device id.
    ///   - notifier: the certificate name.
    ///   - token: the device token, hex, lower case.
    public init(deviceID: String, notifier: String, token: String) {
        self.deviceID = deviceID
        self.notifier = notifier
        self.token = token
    }
}
